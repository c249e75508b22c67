// Reference applications measured in the same run as the scenarios, so that ratios compare like
// with like on the same machine. Each is a script under bench/baseline/ started as a child process.
import { fileURLToPath } from 'node:url';

export const BASELINES = {
  'nest-pg-workflow-by-id': {
    description: 'bare NestJS (express) + pg Pool(max 20): SELECT * FROM workflows WHERE id = $1',
    script: fileURLToPath(new URL('../baseline/server.mjs', import.meta.url)),
    readyPath: '/baseline/health',
    /** Request paths for the given workflow ids. */
    paths: ({ workflowIds }) => workflowIds.map((id) => `/baseline/workflows/${id}`),
  },
  // The same app with the service's ExpressHttpAdapter (requests and responses made with Express's prototypes,
  // docs/PERFORMANCE.md): a reference row only, never what a target's ratio is taken against.
  'nest-pg-workflow-by-id-express-prototypes': {
    description: 'the bare baseline with requests made with Express\'s prototypes (the service\'s ExpressHttpAdapter)',
    script: fileURLToPath(new URL('../baseline/server.mjs', import.meta.url)),
    env: { BASELINE_EXPRESS_PROTOTYPES: '1' },
    readyPath: '/baseline/health',
    paths: ({ workflowIds }) => workflowIds.map((id) => `/baseline/workflows/${id}`),
  },
};
