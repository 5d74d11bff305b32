import { register } from 'node:module';

/**
 * In a checkout, where the CLI runs from its TypeScript sources (under tsx), lets the modules of the
 * checkout import `rerun-pipeline` by name without `npm run build` (see checkoutResolveHook.mjs).
 * The compiled CLI of the package does nothing here: its `exports` are there.
 *
 * @example
 * registerCheckoutImports(); // before a handler module of the checkout is imported
 */
export function registerCheckoutImports(): void {
  if (!import.meta.url.endsWith('.ts')) return;
  register(new URL('./checkoutResolveHook.mjs', import.meta.url));
}
