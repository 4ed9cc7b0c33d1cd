// The JSON body parser of the API (contract rule 1). On top of the default parser it rejects
// duplicate object keys: `{"max_retries": 0, "max_retries": 15}` means different things to different
// parsers, and a payment API must not guess which one the client meant. Prototype poisoning is
// rejected by secure-json-parse as Fastify does by default.
import sjson from 'secure-json-parse';
import { AppError } from './errors.ts';

/** Finds a repeated key in any object of valid JSON text; iterative, so deep nesting cannot overflow. */
export function findDuplicateKey(text: string): string | undefined {
  const objects: Array<Set<string> | null> = []; // null marks an array level
  let expectKey = false;
  for (let index = 0; index < text.length; index++) {
    const char = text[index];
    if (char === '"') {
      let end = index + 1;
      while (text[end] !== '"') end += text[end] === '\\' ? 2 : 1;
      const top = objects.at(-1);
      if (expectKey && top) {
        const key = JSON.parse(text.slice(index, end + 1)) as string;
        if (top.has(key)) return key;
        top.add(key);
        expectKey = false;
      }
      index = end;
    } else if (char === '{') {
      objects.push(new Set());
      expectKey = true;
    } else if (char === '[') {
      objects.push(null);
    } else if (char === '}' || char === ']') {
      objects.pop();
    } else if (char === ',') {
      expectKey = objects.at(-1) instanceof Set;
    }
  }
  return undefined;
}

/** Parses a request body; an empty body is no body (routes without a body schema accept it). */
export function parseJsonBody(text: string): unknown {
  if (text.trim() === '') return undefined;
  let value: unknown;
  try {
    value = sjson.parse(text, undefined, { protoAction: 'error', constructorAction: 'error' });
  } catch {
    // SyntaxError, prototype poisoning, or a RangeError from absurd nesting: all are malformed input.
    throw new AppError('BAD_REQUEST', 'The request body is not valid JSON');
  }
  const duplicate = findDuplicateKey(text);
  if (duplicate !== undefined) {
    throw new AppError('BAD_REQUEST', `The request body repeats the key "${duplicate}"`);
  }
  return value;
}
