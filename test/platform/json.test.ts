// The JSON body parser: duplicate keys at any depth are found; valid JSON without them passes; invalid
// UTF-8 and prototype keys are refused, each with a message that says what is wrong.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { parseJsonBody as parseBytes, scanStructure } from '../../src/platform/json.ts';

const findDuplicateKey = (text: string) => scanStructure(text).repeatedKey;
const nestingDepth = (text: string) => scanStructure(text).depth;

const parseJsonBody = (text: string): unknown => parseBytes(Buffer.from(text, 'utf8'));

describe('JSON body parser', () => {
  it('measures nesting outside strings', () => {
    assert.equal(nestingDepth('"x"'), 0);
    assert.equal(nestingDepth('{"a":[1,{"b":[]}],"c":{}}'), 4);
    assert.equal(nestingDepth('{"a":"[[[{{{\\"]]]"}'), 1);
  });

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

  it('refuses bytes that are not UTF-8 instead of decoding them to U+FFFD', () => {
    for (const bytes of [
      [0xff, 0xfe],
      [0xc3], // a truncated two-byte sequence
      [0xed, 0xa0, 0x80], // an encoded UTF-16 surrogate
      [0xc0, 0xaf], // an overlong encoding of "/"
    ]) {
      const body = Buffer.concat([
        Buffer.from('{"endpoint_url":"https://a.example/'),
        Buffer.from(bytes),
        Buffer.from('"}'),
      ]);
      assert.throws(
        () => parseBytes(body),
        { code: 'BAD_REQUEST', message: 'The request body is not valid UTF-8' },
        body.toString('hex'),
      );
    }
    assert.deepEqual(parseBytes(Buffer.from('{"name":"Zoë 💶"}', 'utf8')), { name: 'Zoë 💶' });
  });

  it('refuses an unpaired UTF-16 surrogate in a string or a key, naming where, and keeps paired ones', () => {
    const cases: Array<[string, string | undefined]> = [
      ['{"address":{"line1":"\\ud800"}}', 'address.line1'],
      ['{"name":"a\\udfffb"}', 'name'],
      ['{"names":["ok","\\uDBFF"]}', 'names[1]'],
      ['{"data":{"\\ud83d":1}}', 'data.\ufffd'],
      ['"\\ud800"', undefined],
    ];
    for (const [text, field] of cases) {
      assert.throws(
        () => parseJsonBody(text),
        (error: { code?: string; field?: string; message?: string }) =>
          error.code === 'BAD_REQUEST' &&
          error.field === field &&
          /^The request body holds an unpaired UTF-16 surrogate.*: strings must be Unicode text$/.test(
            error.message ?? '',
          ),
        text,
      );
    }
    assert.deepEqual(parseJsonBody('{"name":"\\ud83d\\udcb6 \\u00e9"}'), { name: '💶 é' });
  });

  it('names the prototype key it refuses and where, since the body is valid JSON', () => {
    const cases: Array<[string, string, RegExp]> = [
      ['{"__proto__":{"x":1}}', '__proto__', /holds the key "__proto__" \(at __proto__\), which is refused/],
      ['{"filters":{"__proto__":{"x":1}}}', 'filters.__proto__', /"__proto__" \(at filters\.__proto__\)/],
      ['{"a":[{"b":1},{"\\u005f_proto__":1}]}', 'a[1].__proto__', /"__proto__" \(at a\[1\]\.__proto__\)/],
      [
        '{"data":{"constructor":{"prototype":{"x":1}}}}',
        'data.constructor',
        /holds the key "constructor" with a "prototype" inside \(at data\.constructor\), which is refused/,
      ],
    ];
    for (const [text, field, message] of cases) {
      assert.throws(() => parseJsonBody(text), { code: 'BAD_REQUEST', field, message }, text);
    }
    // "constructor" without "prototype" inside is an ordinary key.
    assert.deepEqual(parseJsonBody('{"constructor":{"name":"x"}}'), { constructor: { name: 'x' } });
  });
});
