/**
 * operatorNoteWorkflow: an operator's note that an item needing a person was handled (the console's "mark
 * handled"; OperatorNote in the contract). It ends at once with its input: its history is the durable record,
 * visible in the Web UI like any workflow, and the console leaves out every item that has one. No activity, no
 * timer, nothing sent anywhere.
 */
import type { OperatorNote } from '../../contract';

export async function operatorNoteWorkflow(note: OperatorNote): Promise<OperatorNote> {
  return note;
}
