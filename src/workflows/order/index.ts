/** orderWorkflow: the order after confirmation. Runs started before order-on-demand take ./legacy unchanged. */
import type { OrderOutcome } from '../../contract';
import { legacyOrderWorkflow, type OrderWorkflowArgs } from './legacy';

export async function orderWorkflow(input: OrderWorkflowArgs): Promise<OrderOutcome> {
  return legacyOrderWorkflow(input);
}
