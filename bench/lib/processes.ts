// Service processes of a scenario: `node src/main.ts <role>` on a chosen loopback port, logs to a file,
// ready once GET /readyz answers 200. Every process started here is killed when the bench process exits,
// whatever happens.
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { closeSync, openSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort } from '../../src/db/embedded.ts';
import { sleep } from './util.ts';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

export interface ServiceProcess {
  role: string;
  label: string;
  pid: number;
  /** `http://127.0.0.1:<port>` */
  url: string;
  logFile: string;
  /** Peak resident set size so far (VmHWM of /proc/<pid>/status), in MiB; undefined once exited. */
  peakRssMb(): number | undefined;
  /** The last lines of the process's log. */
  logTail(lines?: number): string;
  /** SIGTERM, then SIGKILL after `graceMs`; resolves with the exit code. */
  stop(graceMs?: number): Promise<number | null>;
}

const running = new Set<ChildProcess>();

process.once('exit', () => {
  for (const child of running) child.kill('SIGKILL');
});

function readVmHwmMb(pid: number): number | undefined {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const match = /^VmHWM:\s+(\d+)\s+kB/m.exec(status);
    return match ? Math.round(Number(match[1]) / 102.4) / 10 : undefined;
  } catch {
    return undefined;
  }
}

function tail(file: string, lines: number): string {
  try {
    return readFileSync(file, 'utf8')
      .split('\n')
      .slice(-lines - 1)
      .join('\n');
  } catch {
    return '';
  }
}

/** Environment of a service process: the bench's own, minus anything that would point it elsewhere. */
function serviceEnv(env: Record<string, string>, port: number): NodeJS.ProcessEnv {
  const base: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(process.env)) {
    if (/^(BENCH_|DATABASE_URL$|TEST_|REDIS_URL$|NODE_TEST)/.test(name)) continue;
    base[name] = value;
  }
  return { ...base, HOST: '127.0.0.1', PORT: String(port), ...env };
}

/**
 * Node.js flags of the service's launch command (README, docs/operator/running.md): V8's young generation
 * capped at 2 x 8 MiB instead of the 2 x 32 MiB it takes on a large machine, and its old generation let
 * grow to twice what the last full collection kept instead of up to four times.
 */
export const SERVICE_NODE_FLAGS = ['--max-semi-space-size=8', '--heap-growing-percent=100'];

export async function startRole(
  role: string,
  env: Record<string, string>,
  options: { label?: string; logDir: string; timeoutMs?: number; signal?: AbortSignal },
): Promise<ServiceProcess> {
  const label = options.label ?? role;
  const port = await freePort();
  const logFile = path.join(options.logDir, `${label}.log`);
  const fd = openSync(logFile, 'a');
  const child = spawn(process.execPath, [...SERVICE_NODE_FLAGS, path.join(ROOT, 'src', 'main.ts'), role], {
    cwd: ROOT,
    env: serviceEnv(env, port),
    stdio: ['ignore', fd, fd],
  });
  closeSync(fd);
  running.add(child);
  let exitCode: number | null | undefined;
  const exited = once(child, 'exit').then(([code]) => {
    exitCode = code as number | null;
    running.delete(child);
    return exitCode;
  });
  const url = `http://127.0.0.1:${port}`;
  const handle: ServiceProcess = {
    role,
    label,
    pid: child.pid!,
    url,
    logFile,
    peakRssMb: () => (exitCode === undefined ? readVmHwmMb(child.pid!) : undefined),
    logTail: (lines = 30) => tail(logFile, lines),
    async stop(graceMs = 20_000) {
      if (exitCode !== undefined) return exitCode;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
      try {
        return await exited;
      } finally {
        clearTimeout(timer);
      }
    },
  };

  const deadline = performance.now() + (options.timeoutMs ?? 120_000);
  for (;;) {
    if (exitCode !== undefined) {
      throw new Error(`${label} exited with ${exitCode} before it was ready:\n${handle.logTail()}`);
    }
    const ready = await fetch(`${url}/readyz`, { signal: AbortSignal.timeout(2_000) }).then(
      (response) => response.status === 200,
      () => false,
    );
    if (ready) return handle;
    if (performance.now() > deadline || options.signal?.aborted) {
      await handle.stop(2_000);
      throw new Error(`${label} was not ready in time:\n${handle.logTail()}`);
    }
    await sleep(100);
  }
}

/**
 * Runs a bench helper script (`node bench/lib/<script>`) to completion and returns its last stdout line
 * parsed as JSON. Killed at `timeoutMs` or when `signal` aborts.
 */
export async function runScript<T>(
  script: string,
  args: string[],
  options: { timeoutMs: number; signal?: AbortSignal },
): Promise<T> {
  const child = spawn(process.execPath, [path.join(ROOT, 'bench', 'lib', script), ...args], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  running.add(child);
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => {
    stdout += chunk.toString('utf8');
  });
  child.stderr.on('data', (chunk: Buffer) => {
    stderr = (stderr + chunk.toString('utf8')).slice(-4000);
  });
  const kill = () => child.kill('SIGKILL');
  const timer = setTimeout(kill, options.timeoutMs);
  options.signal?.addEventListener('abort', kill, { once: true });
  try {
    const [code, signal] = (await once(child, 'exit')) as [number | null, string | null];
    if (code !== 0) throw new Error(`${script} exited with ${code ?? signal}:\n${stderr}`);
    const line = stdout.trim().split('\n').pop() ?? '';
    return JSON.parse(line) as T;
  } finally {
    clearTimeout(timer);
    options.signal?.removeEventListener('abort', kill);
    running.delete(child);
  }
}
