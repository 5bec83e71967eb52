/**
 * What a failed activity is called in a workflow's state and outcome: the typed name of its cause (a stable error
 * name such as SupplierRateLimited), else its message. Workflow code only.
 */
export function failureType(err: unknown): string {
  const e = err as { cause?: { type?: string; message?: string }; message?: string };
  return e?.cause?.type ?? e?.cause?.message ?? String(e?.message ?? err);
}
