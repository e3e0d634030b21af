// Module resolution hook (see register.js): adds the `@benchmarks/source` export condition.
const CONDITION = '@benchmarks/source';

export async function resolve(specifier, context, nextResolve) {
  if (context.conditions.includes(CONDITION)) return nextResolve(specifier, context);
  return nextResolve(specifier, { ...context, conditions: [...context.conditions, CONDITION] });
}
