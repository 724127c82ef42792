#!/usr/bin/env node
// Runs the TypeScript sources through tsx's loader: no build step between `npm ci` and use.
import { register } from 'tsx/esm/api';

register();
await import('../src/main.ts');
