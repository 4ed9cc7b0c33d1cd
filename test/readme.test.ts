// The README's quick start tells a new user on an older Node.js which `npm ci` warnings to expect:
// every package of the lockfile whose `engines.node` excludes Node.js 20 is named there, so a new
// dependency that adds such a warning fails this test until the README says so.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';

const ROOT = new URL('../', import.meta.url);
/** The Node.js of a new user's machine that npm 11 still runs on. */
const OLDER_NODE: [number, number, number] = [20, 20, 0];

type Version = [number, number, number];
const compare = (a: Version, b: Version): number => a[0] - b[0] || a[1] - b[1] || a[2] - b[2];

/** Whether `version` satisfies one npm range comparator (`>=22`, `^16`, `10.*`, `>= 10.x`, `20`). */
function satisfiesComparator(version: Version, comparator: string): boolean {
  const match = /^(>=|<=|>|<|\^|~|=)?v?(\d+)(?:\.(\d+|x|\*))?(?:\.(\d+|x|\*))?$/.exec(comparator);
  if (!match) throw new Error(`cannot evaluate the engines comparator "${comparator}"`);
  const [, operator = '', majorText, minorText, patchText] = match;
  const part = (text: string | undefined) =>
    text === undefined || /^[x*]$/.test(text) ? undefined : Number(text);
  const major = Number(majorText);
  const minor = part(minorText);
  const patch = part(patchText);
  const floor: Version = [major, minor ?? 0, patch ?? 0];
  switch (operator) {
    case '>=':
      return compare(version, floor) >= 0;
    case '>':
      return minor === undefined ? version[0] > major : compare(version, floor) > 0;
    case '<':
      return compare(version, floor) < 0;
    case '<=':
      return minor === undefined ? version[0] <= major : compare(version, floor) <= 0;
    case '^':
      return version[0] === major && compare(version, floor) >= 0;
    case '~':
      return (
        version[0] === major && (minor === undefined || version[1] === minor) && compare(version, floor) >= 0
      );
    default:
      return (
        version[0] === major &&
        (minor === undefined || version[1] === minor) &&
        (patch === undefined || version[2] === patch)
      );
  }
}

function satisfies(version: Version, range: string): boolean {
  return range.split('||').some((set) => {
    const comparators = set
      .trim()
      .replace(/(>=|<=|>|<|\^|~|=)\s+/g, '$1')
      .split(/\s+/)
      .filter(Boolean);
    return comparators.every((comparator) => comparator === '*' || satisfiesComparator(version, comparator));
  });
}

interface LockPackage {
  name?: string;
  engines?: { node?: string };
  os?: string[];
  cpu?: string[];
}

describe('README quick start', () => {
  it('evaluates engines ranges as npm does for the forms the lockfile holds', () => {
    assert.equal(satisfies([20, 20, 0], '>=22'), false);
    assert.equal(satisfies([20, 20, 0], '18 || 20 || >=22'), true);
    assert.equal(satisfies([20, 20, 0], '^16 || ^18 || >=20'), true);
    assert.equal(satisfies([20, 20, 0], '>=20.18.1'), true);
    assert.equal(satisfies([20, 20, 0], '>=20.21.0'), false);
    assert.equal(satisfies([20, 20, 0], '10.* || >= 12.*'), true);
    assert.equal(satisfies([20, 20, 0], '>=16 || 14 >=14.17'), true);
    assert.equal(satisfies([20, 20, 0], '^8.9.4'), false);
    assert.equal(satisfies([20, 20, 0], '*'), true);
  });

  it('names every package whose engines npm ci warns about under Node.js 20', () => {
    const lock = JSON.parse(readFileSync(new URL('package-lock.json', ROOT), 'utf8')) as {
      packages: Record<string, LockPackage>;
    };
    const installedHere = (entry: LockPackage) =>
      (entry.os === undefined || entry.os.includes(process.platform)) &&
      (entry.cpu === undefined || entry.cpu.includes(process.arch));
    const warned = Object.entries(lock.packages)
      .filter(([, entry]) => entry.engines?.node !== undefined && installedHere(entry))
      .filter(([, entry]) => !satisfies(OLDER_NODE, entry.engines!.node!))
      .map(([path, entry]) => ({
        name: path === '' ? '(this project)' : path.replace(/^.*node_modules\//, ''),
        range: entry.engines!.node!,
      }));
    assert.ok(warned.length > 0, 'the project itself needs Node.js 24');

    const readme = readFileSync(new URL('README.md', ROOT), 'utf8');
    const quickStart = readme.slice(
      readme.indexOf('## Quick start'),
      readme.indexOf('\n## ', readme.indexOf('## Quick start') + 1),
    );
    assert.match(quickStart, /EBADENGINE/);
    const words = ['none', 'one', 'two', 'three', 'four', 'five', 'six'];
    assert.match(
      quickStart,
      new RegExp(`\\b${words[warned.length]}\\b[^.]*EBADENGINE`),
      'says how many warnings',
    );
    for (const { name, range } of warned) {
      if (name === '(this project)')
        assert.ok(quickStart.includes(`'${range}'`), `the project's range ${range}`);
      else assert.ok(quickStart.includes(`\`${name}\``), `${name} (${range}) is named in the quick start`);
    }
  });
});
