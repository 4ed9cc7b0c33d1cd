// The JSON body parser: duplicate keys at any depth are found; valid JSON without them passes.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { findDuplicateKey, parseJsonBody } from '../../src/platform/json.ts';

describe('JSON body parser', () => {
  it('finds a repeated key at the top level and in nested objects', () => {
    assert.equal(findDuplicateKey('{"a":1,"a":2}'), 'a');
    assert.equal(findDuplicateKey('{"x":{"b":[{"c":1,"c":2}]}}'), 'c');
    assert.equal(findDuplicateKey('{"k\\"ey":1,"k\\u0022ey":2}'), 'k"ey', 'escapes are compared decoded');
  });

  it('does not confuse values, array items or sibling objects with keys', () => {
    assert.equal(findDuplicateKey('{"a":"a","b":["a","a"],"c":{"a":1},"d":{"a":2}}'), undefined);
    assert.equal(findDuplicateKey('[{"a":1},{"a":1}]'), undefined);
    assert.equal(
      findDuplicateKey('{"a":"{\\"a\\":1,\\"a\\":2}"}'),
      undefined,
      'JSON inside a string is a value',
    );
  });

  it('agrees with JSON.parse on every generated document without duplicates', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        const text = JSON.stringify(value);
        // Prototype-poisoning keys are rejected on purpose; they are covered below.
        fc.pre(!text.includes('"__proto__"') && !text.includes('"constructor"'));
        assert.equal(findDuplicateKey(text), undefined);
        assert.deepEqual(parseJsonBody(text), JSON.parse(text));
      }),
      { numRuns: 500 },
    );
  });

  it('treats an empty or blank body as no body', () => {
    assert.equal(parseJsonBody(''), undefined);
    assert.equal(parseJsonBody('  \n'), undefined);
  });

  it('rejects malformed JSON, prototype poisoning and duplicate keys as BAD_REQUEST', () => {
    for (const text of ['{', '{"a":1,}', '{"__proto__":{"x":1}}', '{"a":1,"a":1}', "{'a':1}"]) {
      assert.throws(() => parseJsonBody(text), { code: 'BAD_REQUEST' }, text);
    }
  });
});
