/**
 * operatorNoteWorkflow: an operator's note that an item needing a person was handled (the console's "mark
 * handled"; OperatorNote in the contract). It ends at once with its input: its history is the durable record,
 * visible in the Web UI like any workflow, and the console leaves out every item that has one. No activity, no
 * timer, nothing sent anywhere.
 */
import { setWorkflowOptions, workflowInfo } from '@temporalio/workflow';
import { noteInputIssues, refuseInput } from '../input-guard';
import { pinnedWhenVersioned } from '../versioning';
import type { OperatorNote } from '../../api/contract/index';

/** PINNED: it ends in its first workflow task, on the build that took it; there is nothing to move. */
setWorkflowOptions(pinnedWhenVersioned, operatorNoteWorkflow);

export async function operatorNoteWorkflow(note: OperatorNote): Promise<OperatorNote> {
  // The note is the record of who handled what: one that does not name its own item, or is unbounded, is refused.
  const issues = noteInputIssues(note, workflowInfo());
  if (issues.length > 0) throw refuseInput('InvalidOperatorNote', issues);
  return note;
}
