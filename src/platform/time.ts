// Timestamps (D3): ISO-8601 UTC with milliseconds and `Z`.

export function toIso(value: Date): string;
export function toIso(value: Date | null): string | null;
export function toIso(value: Date | null): string | null {
  return value === null ? null : value.toISOString();
}
