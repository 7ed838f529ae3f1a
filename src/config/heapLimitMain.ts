/**
 * Prints the heap limit (MB) for this process's memory limit: the container image's command
 * (`scripts/container-start.sh`) starts the service with it as `--max-old-space-size` (decision 0077).
 */
import { totalmem } from 'node:os';
import { heapLimitMbFor } from './runtime.js';

process.stdout.write(`${heapLimitMbFor(process.constrainedMemory(), totalmem())}\n`);
