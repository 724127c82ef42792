#!/usr/bin/env node
// Builds the dashboard's front end unless dist/web already holds a build of the current sources.
// Run by the root `prepare` script, so `npm ci` on a fresh clone leaves a servable dashboard.
import { register } from 'tsx/esm/api';

register();
const { ensureWebBuild } = await import('../src/web-build.ts');
await ensureWebBuild((line) => process.stderr.write(`dashboard: ${line}\n`));
