/** The child process of `boundedModule`: loads the module named in argv and answers calls to its exports. */
const module: Record<string, (...args: unknown[]) => unknown> = await import(process.argv[2]!);

process.on('message', ({ id, name, args }: { id: number; name: string; args: unknown[] }) => {
  try {
    process.send!({ id, value: module[name]!(...args) });
  } catch (error) {
    process.send!({ id, error: error instanceof Error ? (error.stack ?? error.message) : String(error) });
  }
});
process.send!({ ready: true });
