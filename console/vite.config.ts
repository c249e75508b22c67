import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

const root = fileURLToPath(new URL('.', import.meta.url));

// The console is served by the service at /console (src/console/console.middleware.ts) from dist/console.
export default defineConfig({
  root,
  base: '/console/',
  // Preact's automatic JSX runtime: no plugin needed (no hot reload; the console is rebuilt with npm run build).
  oxc: { jsx: { runtime: 'automatic', importSource: 'preact' } },
  build: {
    outDir: fileURLToPath(new URL('../dist/console', import.meta.url)),
    emptyOutDir: true,
    // Everything in files: the CSP allows no inline script, style or data: script.
    assetsInlineLimit: 0,
    // No modulepreload polyfill: it would be an inline script in index.html.
    modulePreload: { polyfill: false },
    sourcemap: false,
    target: 'es2022',
  },
});
