/**
 * operatorNoteWorkflow: an operator's note that an item needing a person was handled (the console's "mark
 * handled"; OperatorNote in the contract). It ends at once with its input: its history is the durable record,
 * visible in the Web UI like any workflow, and the console leaves out every item that has one. No activity, no
 * timer, nothing sent anywhere.
 */
import { setWorkflowOptions } from '@temporalio/workflow';
import { pinnedWhenVersioned } from '../versioning';
import type { OperatorNote } from '../../contract';

/** PINNED: it ends in its first workflow task, on the build that took it; there is nothing to move. */
setWorkflowOptions(pinnedWhenVersioned, operatorNoteWorkflow);

export async function operatorNoteWorkflow(note: OperatorNote): Promise<OperatorNote> {
  return note;
}
