/**
 * Every relative link and #anchor in README.md and docs/*.md resolves: the file (or folder) exists, and an anchor
 * matches a heading of the target page as GitHub slugs it. External links (http, https, mailto) are not fetched.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';

const ROOT = path.resolve(__dirname, '../..');
const PAGES = [
  'README.md',
  ...readdirSync(path.join(ROOT, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .map((f) => `docs/${f}`),
];

/** The text outside fenced code blocks and inline code spans. */
function prose(markdown: string): string {
  return markdown.replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, '').replace(/``[^`\n]*``|`[^`\n]*`/g, '');
}

/** GitHub's heading anchor: lower case, punctuation dropped, spaces to hyphens; repeats get -1, -2, … */
export function githubSlug(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/<[^>]+>/g, '')
    .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/[^\p{L}\p{N}\p{M}\s_-]/gu, '')
    .replace(/ /g, '-');
}

function anchorsOf(file: string): Set<string> {
  const text = readFileSync(file, 'utf8').replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, '');
  const seen = new Map<string, number>();
  const anchors = new Set<string>();
  for (const m of text.matchAll(/^#{1,6}\s+(.+?)\s*#*\s*$/gm)) {
    const base = githubSlug(m[1]!);
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    anchors.add(n === 0 ? base : `${base}-${n}`);
  }
  for (const m of text.matchAll(/<a\s+(?:name|id)="([^"]+)"/g)) anchors.add(m[1]!);
  return anchors;
}

function linksOf(page: string): string[] {
  const text = prose(readFileSync(path.join(ROOT, page), 'utf8'));
  const targets = [...text.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)].map((m) => m[1]!);
  const references = [...text.matchAll(/^\s*\[[^\]]+\]:\s*(\S+)/gm)].map((m) => m[1]!);
  return [...targets, ...references].filter((t) => !/^[a-z][a-z0-9+.-]*:/i.test(t));
}

describe('links in README.md and docs/', () => {
  test('the pages are there, and their links are found', () => {
    expect(PAGES).toEqual(expect.arrayContaining(['README.md', 'docs/configuration.md', 'docs/operations.md']));
    expect(linksOf('README.md').length).toBeGreaterThan(10);
    expect(linksOf('README.md').some((link) => link.includes('#'))).toBe(true);
  });

  test.each(PAGES)('%s: every relative link and anchor resolves', (page) => {
    const broken: string[] = [];
    for (const link of linksOf(page)) {
      const [filePart, anchor] = link.split('#', 2) as [string, string | undefined];
      const target =
        filePart === ''
          ? path.join(ROOT, page)
          : path.resolve(path.dirname(path.join(ROOT, page)), decodeURI(filePart));
      if (!existsSync(target)) {
        broken.push(`${link}: no such file`);
        continue;
      }
      if (anchor !== undefined && target.endsWith('.md') && statSync(target).isFile()) {
        if (!anchorsOf(target).has(anchor)) broken.push(`${link}: no heading with that anchor`);
      }
    }
    expect(broken).toEqual([]);
  });

  test("the slug rule is GitHub's", () => {
    expect(githubSlug('Changing the workflow safely')).toBe('changing-the-workflow-safely');
    expect(githubSlug('After confirmation: cancellation, callbacks')).toBe('after-confirmation-cancellation-callbacks');
    expect(githubSlug('`npm start` and the stack')).toBe('npm-start-and-the-stack');
    expect(githubSlug('Round three (issue 25): preloaded')).toBe('round-three-issue-25-preloaded');
  });
});
