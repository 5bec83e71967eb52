/**
 * Formats a zod error as `path: message` lines, so every rejection names the field.
 * Type-only use of zod: workflow code may import this without loading zod.
 */
import type { z } from 'zod';

export function describeIssues(error: z.ZodError, root = ''): string[] {
  return error.issues.map((issue) => {
    const path = [root, ...issue.path.map(String)].filter((p) => p !== '').join('.');
    return `${path || '(root)'}: ${issue.message}`;
  });
}
