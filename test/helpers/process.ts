// Whole-process tests: start the real CLI (`node src/main.ts <role>`) and talk to it over HTTP.
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';

export interface ServiceProcess {
  child: ChildProcess;
  baseUrl: string;
  stdout(): string;
  stderr(): string;
  /** Sends a signal and waits for the exit code. */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

/** Environment for a child process: the parent's, minus the test runner's database settings. */
export function childEnv(env: Record<string, string>): NodeJS.ProcessEnv {
  const base = { ...process.env };
  for (const name of ['DATABASE_URL', 'TEST_DATABASE_URL', 'NODE_TEST_CONTEXT', 'REDIS_URL'])
    delete base[name];
  return { ...base, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'info', ...env };
}

/** Starts a role and resolves once it logs the address it listens on. */
export async function startService(
  role: string,
  env: Record<string, string>,
  timeoutMs = 90_000,
): Promise<ServiceProcess> {
  const child = spawn(process.execPath, ['src/main.ts', role], {
    env: childEnv(env),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout!.on('data', (chunk: Buffer) => {
    out += chunk.toString('utf8');
  });
  child.stderr!.on('data', (chunk: Buffer) => {
    err += chunk.toString('utf8');
  });
  const baseUrl = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`${role} did not start in time:\n${out}\n${err}`)),
      timeoutMs,
    );
    const check = () => {
      const match = /listening on (http:\/\/[\d.]+:\d+)/.exec(out);
      if (match) {
        clearTimeout(timer);
        resolve(match[1]!);
      }
    };
    child.stdout!.on('data', check);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${role} exited with ${code} before listening:\n${out}\n${err}`));
    });
  });
  return {
    child,
    baseUrl,
    stdout: () => out,
    stderr: () => err,
    async stop(signal = 'SIGTERM') {
      if (child.exitCode !== null || child.signalCode !== null) return child.exitCode;
      child.kill(signal);
      const [code] = (await once(child, 'exit')) as [number | null];
      return code;
    },
  };
}

/** Runs a role to completion (e.g. one that must refuse to start); returns its exit code and output. */
export async function runToExit(
  role: string,
  env: Record<string, string>,
  timeoutMs = 60_000,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, ['src/main.ts', role], {
    env: childEnv(env),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => {
    stdout += chunk.toString('utf8');
  });
  child.stderr.on('data', (chunk: Buffer) => {
    stderr += chunk.toString('utf8');
  });
  const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
  const [code] = (await once(child, 'exit')) as [number | null];
  clearTimeout(timer);
  return { code, stdout, stderr };
}
