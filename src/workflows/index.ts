/** Every workflow the worker registers. Workflow code only: no Node built-ins, no I/O. */
export { bookingWorkflow } from './booking/index';
export { orderWorkflow } from './order/index';
export { reconciliationSweepWorkflow } from './sweep/index';
export { operatorNoteWorkflow } from './note/index';
export { deployGateWorkflow } from './gate/index';
