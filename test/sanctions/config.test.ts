// The sanctions settings (D18): SANCTIONS_MATCH_THRESHOLD and SANCTIONS_IMPORT_MAX_MB, validated at start.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ConfigError, loadConfig } from '../../src/config.ts';

const rejects = (env: Record<string, string>, variable: string) =>
  assert.throws(
    () => loadConfig(env),
    (error: unknown) => error instanceof ConfigError && error.variable === variable,
  );

describe('sanctions configuration', () => {
  it('defaults to a threshold of 0.85 and imports of up to 64 MiB', () => {
    const config = loadConfig({});
    assert.equal(config.sanctionsMatchThreshold, '0.85');
    assert.equal(config.sanctionsImportMaxBytes, 64 * 1024 * 1024);
  });

  it('takes a threshold above 0 and at most 1 with at most 2 decimals, written with 2', () => {
    assert.equal(loadConfig({ SANCTIONS_MATCH_THRESHOLD: '0.9' }).sanctionsMatchThreshold, '0.90');
    assert.equal(loadConfig({ SANCTIONS_MATCH_THRESHOLD: '1' }).sanctionsMatchThreshold, '1.00');
    assert.equal(loadConfig({ SANCTIONS_MATCH_THRESHOLD: '0.05' }).sanctionsMatchThreshold, '0.05');
    for (const value of ['0', '0.00', '1.01', '0.855', '85', '-0.5', 'high', '.9']) {
      rejects({ SANCTIONS_MATCH_THRESHOLD: value }, 'SANCTIONS_MATCH_THRESHOLD');
    }
  });

  it('takes an import limit of 1 to 1024 MiB', () => {
    assert.equal(loadConfig({ SANCTIONS_IMPORT_MAX_MB: '200' }).sanctionsImportMaxBytes, 200 * 1024 * 1024);
    rejects({ SANCTIONS_IMPORT_MAX_MB: '0' }, 'SANCTIONS_IMPORT_MAX_MB');
    rejects({ SANCTIONS_IMPORT_MAX_MB: '5000' }, 'SANCTIONS_IMPORT_MAX_MB');
  });
});
