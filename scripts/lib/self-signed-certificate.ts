// A self-signed certificate made with openssl at run time, for the local HTTPS receivers of the tests
// and the benchmarks (webhook deliveries are HTTPS only, and TLS is verified).
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';

export interface SelfSignedCertificate {
  key: string;
  cert: string;
  /** PEM file of the certificate, usable as a CA file (NODE_EXTRA_CA_CERTS, WEBHOOK_CA_FILE). */
  certPath: string;
}

/** Writes key.pem and cert.pem (EC P-256, valid 2 days) to `dir` for the given subjectAltName entries. */
export function makeSelfSignedCertificate(
  dir: string,
  commonName: string,
  altNames: readonly string[],
): SelfSignedCertificate {
  const keyPath = path.join(dir, 'key.pem');
  const certPath = path.join(dir, 'cert.pem');
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:prime256v1',
      '-nodes',
      '-keyout',
      keyPath,
      '-out',
      certPath,
      '-days',
      '2',
      '-subj',
      `/CN=${commonName}`,
      '-addext',
      `subjectAltName=${altNames.join(',')}`,
    ],
    { stdio: 'ignore' },
  );
  return { key: readFileSync(keyPath, 'utf8'), cert: readFileSync(certPath, 'utf8'), certPath };
}
