/** Workers in tests log warnings and errors only; INFO lines about worker state drown the test output. */
import { DefaultLogger, Runtime } from '@temporalio/worker';

Runtime.install({ logger: new DefaultLogger('WARN') });
