/** Jest setup file of the tiers that run workers or activities (see ./quiet-worker-logs.ts). */
import { installWorkerLogs } from './quiet-worker-logs';

installWorkerLogs();
