// The JSON body parser of the API (contract rule 1). On top of the default parser it refuses
// - bytes that are not UTF-8 (RFC 8259 section 8.1): decoding would replace them with U+FFFD and store
//   text the client never sent;
// - duplicate object keys: `{"max_retries": 0, "max_retries": 15}` means different things to different
//   parsers, and a payment API must not guess which one the client meant;
// - the keys `__proto__`, and `constructor` holding `prototype`, as Fastify does by default
//   (secure-json-parse): valid JSON, but able to change object prototypes in JavaScript code;
// - strings with an unpaired UTF-16 surrogate (`"\ud800"`): valid JSON text, but not Unicode text, so it
//   cannot be stored as written (PostgreSQL refuses it in jsonb, and text would get U+FFFD);
// - nesting deeper than MAX_BODY_DEPTH levels.
import { isUtf8 } from 'node:buffer';
import sjson from 'secure-json-parse';
import { AppError } from './errors.ts';

/**
 * One pass over valid JSON text for what parsing does not report: the first key repeated in any object,
 * and how deeply arrays and objects nest (up to that key). Strings are skipped; iterative, so deep nesting
 * cannot overflow.
 */
export function scanStructure(text: string): { repeatedKey?: string; depth: number } {
  const objects: Array<Set<string> | null> = []; // null marks an array level
  let expectKey = false;
  let depth = 0;
  for (let index = 0; index < text.length; index++) {
    const char = text[index];
    if (char === '"') {
      let end = index + 1;
      while (text[end] !== '"') end += text[end] === '\\' ? 2 : 1;
      const top = objects.at(-1);
      if (expectKey && top) {
        const key = JSON.parse(text.slice(index, end + 1)) as string;
        if (top.has(key)) return { repeatedKey: key, depth };
        top.add(key);
        expectKey = false;
      }
      index = end;
    } else if (char === '{' || char === '[') {
      objects.push(char === '{' ? new Set() : null);
      expectKey = char === '{';
      if (objects.length > depth) depth = objects.length;
    } else if (char === '}' || char === ']') {
      objects.pop();
    } else if (char === ',') {
      expectKey = objects.at(-1) instanceof Set;
    }
  }
  return { depth };
}

/**
 * Deepest nesting a body may have. Bodies of the contract nest a few levels; much deeper ones would only
 * exhaust the stack of code that walks them recursively (JSON.stringify of a test event's data).
 */
export const MAX_BODY_DEPTH = 64;

/**
 * The first key secure-json-parse refuses, with its path (`filters.__proto__`); undefined when the
 * text is not JSON at all. Iterative, so deep nesting cannot overflow.
 */
export function findRefusedKey(text: string): { key: string; path: string } | undefined {
  let root: unknown;
  try {
    root = JSON.parse(text);
  } catch {
    return undefined;
  }
  const pending: Array<{ value: unknown; path: string }> = [{ value: root, path: '' }];
  for (let item = pending.pop(); item !== undefined; item = pending.pop()) {
    const { value, path } = item;
    if (typeof value !== 'object' || value === null) continue;
    if (Array.isArray(value)) {
      value.forEach((element, index) => {
        pending.push({ value: element, path: `${path}[${index}]` });
      });
      continue;
    }
    for (const [key, child] of Object.entries(value)) {
      const childPath = path ? `${path}.${key}` : key;
      if (key === '__proto__') return { key, path: childPath };
      if (
        key === 'constructor' &&
        typeof child === 'object' &&
        child !== null &&
        Object.hasOwn(child, 'prototype')
      ) {
        return { key, path: childPath };
      }
      pending.push({ value: child, path: childPath });
    }
  }
  return undefined;
}

/** An escaped surrogate: the only way valid UTF-8 can spell an unpaired one, so a cheap test first. */
const SURROGATE_ESCAPE = /\\u[dD][89a-fA-F][0-9a-fA-F]{2}/;

/** The path of the first string or key holding an unpaired surrogate ('' for the body itself); iterative. */
export function findUnpairedSurrogate(root: unknown): string | undefined {
  const pending: Array<{ value: unknown; path: string }> = [{ value: root, path: '' }];
  for (let item = pending.pop(); item !== undefined; item = pending.pop()) {
    const { value, path } = item;
    if (typeof value === 'string') {
      if (!value.isWellFormed()) return path;
    } else if (Array.isArray(value)) {
      for (const [index, element] of value.entries())
        pending.push({ value: element, path: `${path}[${index}]` });
    } else if (typeof value === 'object' && value !== null) {
      for (const [key, child] of Object.entries(value)) {
        const childPath = path ? `${path}.${key.toWellFormed()}` : key.toWellFormed();
        if (!key.isWellFormed()) return childPath;
        pending.push({ value: child, path: childPath });
      }
    }
  }
  return undefined;
}

/** Parses a request body; an empty body is no body (routes without a body schema accept it). */
export function parseJsonBody(bytes: Buffer): unknown {
  if (!isUtf8(bytes)) throw new AppError('BAD_REQUEST', 'The request body is not valid UTF-8');
  const text = bytes.toString('utf8');
  if (text.trim() === '') return undefined;
  let value: unknown;
  try {
    value = sjson.parse(text, undefined, { protoAction: 'error', constructorAction: 'error' });
  } catch {
    const refused = findRefusedKey(text);
    if (refused !== undefined) {
      throw new AppError(
        'BAD_REQUEST',
        refused.key === '__proto__'
          ? `The request body holds the key "__proto__" (at ${refused.path}), which is refused: it can change object prototypes`
          : `The request body holds the key "constructor" with a "prototype" inside (at ${refused.path}), which is refused: it can change object prototypes`,
        { field: refused.path },
      );
    }
    // SyntaxError, or a RangeError from absurd nesting: malformed input either way.
    throw new AppError('BAD_REQUEST', 'The request body is not valid JSON');
  }
  const { repeatedKey, depth } = scanStructure(text);
  if (depth > MAX_BODY_DEPTH) {
    throw new AppError(
      'BAD_REQUEST',
      `The request body nests arrays and objects deeper than ${MAX_BODY_DEPTH} levels`,
    );
  }
  if (repeatedKey !== undefined) {
    throw new AppError('BAD_REQUEST', `The request body repeats the key "${repeatedKey}"`);
  }
  const surrogate = SURROGATE_ESCAPE.test(text) ? findUnpairedSurrogate(value) : undefined;
  if (surrogate !== undefined) {
    throw new AppError(
      'BAD_REQUEST',
      `The request body holds an unpaired UTF-16 surrogate${surrogate ? ` (at ${surrogate})` : ''}: strings must be Unicode text`,
      surrogate ? { field: surrogate } : {},
    );
  }
  return value;
}
