// Types of worker-manifests.mjs, for the tests that import it.
import type { WorkspaceApp } from '../workspace-apps.mjs';

export declare const COMPOSE_BEGIN: string;
export declare const COMPOSE_END: string;
export declare function renderedWorkers(root?: string): WorkspaceApp[];
export declare function composeWorkers(apps?: WorkspaceApp[]): string[];
export declare function k8sWorkers(apps?: WorkspaceApp[]): string;
export declare function staleWorkerManifests(): string[];
