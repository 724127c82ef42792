// The only module that imports the OpenTelemetry SDK: `startTelemetry` loads it when tracing is on.
import {
  context,
  defaultTextMapGetter,
  defaultTextMapSetter,
  diag,
  DiagLogLevel,
  createContextKey,
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  trace,
  type Attributes,
  type Context,
  type Link,
  type Span,
  type Tracer,
} from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import {
  ExportResultCode,
  setGlobalErrorHandler,
  W3CTraceContextPropagator,
  type ExportResult,
} from '@opentelemetry/core';
import { defaultResource, resourceFromAttributes } from '@opentelemetry/resources';
import {
  BatchSpanProcessor,
  TracerProvider,
  type ReadableSpan,
  type Span as SdkSpan,
  type SpanExporter,
  type SpanProcessor,
} from '@opentelemetry/sdk-trace';
import {
  BENCHFLEET_VERSION,
  causeOf,
  createLogger,
  errorMessage,
  redactSecrets,
  RepeatedLog,
  type Logger,
} from '@benchfleet/core';
import { errorTypeOf } from './error-type.js';
import { llmEndpointOf, type LlmEndpoint } from './llm-endpoint.js';
import {
  BENCHFLEET,
  BENCHFLEET_SPANS,
  ERROR_TYPE_OTHER,
  GENAI,
  GENERAL,
  MESSAGING,
} from './span-attributes.js';
import { displayEndpoint, type TelemetryOn } from './telemetry-config.js';
import { genAiInputMessages } from './genai-messages.js';
import type {
  AttemptKey,
  AttemptOutcome,
  AttemptSpan,
  AttemptStart,
  EnqueueStart,
  LlmCallEnd,
  LlmCallSpan,
  LlmCallStart,
  SpanParent,
  StartTelemetryOptions,
  StepAttributes,
  StepSpan,
  Telemetry,
  TelemetryShutdown,
} from './telemetry.js';

const TRACER_NAME = '@benchfleet/telemetry';
type CompressionOption = NonNullable<
  ConstructorParameters<
    typeof import('@opentelemetry/exporter-trace-otlp-http').OTLPTraceExporter
  >[0]
>['compression'];
const DEFAULT_SHUTDOWN_TIMEOUT_MS = 5000;
const DEFAULT_LOG_INTERVAL_MS = 60_000;
/** Error text on a span is for a person reading a trace: short, and without secrets. */
const MAX_MESSAGE = 300;
const MAX_ENDPOINTS = 64;

/** A step's action on a span: a summary for a person scanning a trace, not the whole action. */
const MAX_ACTION = 120;
const w3c = new W3CTraceContextPropagator();

/** The attempt a context belongs to: every span started in it carries the attempt's ids. */
const ATTEMPT_ATTRIBUTION = createContextKey('benchfleet attempt attribution');

/**
 * Puts the run, task and attempt ids on every span started within an attempt (steps, LLM calls
 * made or relayed, anything added later), so a trace can be cut by any of them without walking
 * up to the attempt span; ids a span was given itself are kept.
 */
class AttemptAttributionProcessor implements SpanProcessor {
  onStart(span: SdkSpan, parentContext: Context): void {
    const key = parentContext.getValue(ATTEMPT_ATTRIBUTION) as AttemptKey | undefined;
    if (key === undefined) return;
    const ids: Record<string, string | number> = {
      [BENCHFLEET.runId]: key.runId,
      [BENCHFLEET.taskId]: key.taskId,
      [BENCHFLEET.attempt]: key.attempt,
    };
    for (const [name, value] of Object.entries(ids))
      if (span.attributes[name] === undefined) span.setAttribute(name, value);
  }

  onEnd(): void {}

  forceFlush(): Promise<void> {
    return Promise.resolve();
  }

  shutdown(): Promise<void> {
    return Promise.resolve();
  }
}

/** One context manager per process: the API takes only the first one registered. */
let contextManager: AsyncLocalStorageContextManager | undefined;

function shortMessage(error: unknown): string {
  const message = redactSecrets(errorMessage(error)).replace(/\s+/g, ' ').trim();
  return message.length > MAX_MESSAGE ? `${message.slice(0, MAX_MESSAGE)}…` : message;
}

/** Copies the defined values: an attribute is absent rather than null. */
function put(attributes: Attributes, key: string, value: unknown): void {
  if (value === undefined || value === null) return;
  if (typeof value === 'number' && !Number.isFinite(value)) return;
  attributes[key] = value as Attributes[string];
}

function stepAttributes(step: Partial<StepAttributes>): Attributes {
  const attributes: Attributes = {};
  put(attributes, BENCHFLEET.stepNumber, step.step);
  put(attributes, BENCHFLEET.stepActionKind, step.actionKind);
  if (step.action !== undefined && step.action !== null) {
    const action = redactSecrets(step.action).replace(/\s+/g, ' ').trim();
    attributes[BENCHFLEET.stepAction] =
      action.length > MAX_ACTION ? `${action.slice(0, MAX_ACTION)}…` : action;
  }
  put(attributes, BENCHFLEET.stepLatencyMs, step.latencyMs);
  put(attributes, BENCHFLEET.inputTokens, step.tokensIn);
  put(attributes, BENCHFLEET.outputTokens, step.tokensOut);
  put(attributes, BENCHFLEET.stepReward, step.reward);
  return attributes;
}

/** Tells export failures once per interval, with a count; never throws. */
class ReportedExporter implements SpanExporter {
  /** Exports not yet answered: the batching processor stops waiting for one at its own timeout. */
  readonly #inFlight = new Set<Promise<void>>();

  constructor(
    private readonly inner: SpanExporter,
    private readonly report: (error: unknown, spans: number) => void,
  ) {}

  export(spans: ReadableSpan[], done: (result: ExportResult) => void): void {
    let answered!: () => void;
    const exported = new Promise<void>((resolve) => (answered = resolve));
    this.#inFlight.add(exported);
    this.inner.export(spans, (result) => {
      if (result.code !== ExportResultCode.SUCCESS) this.report(result.error, spans.length);
      this.#inFlight.delete(exported);
      answered();
      done(result);
    });
  }

  /** Resolves once every export begun so far is answered (or has failed and been told). */
  async settled(): Promise<void> {
    while (this.#inFlight.size > 0) await Promise.all([...this.#inFlight]);
  }

  shutdown(): Promise<void> {
    return this.inner.shutdown();
  }

  forceFlush(): Promise<void> {
    return this.inner.forceFlush?.() ?? Promise.resolve();
  }
}

class OtelAttemptSpan implements AttemptSpan {
  #outcomeSet = false;

  constructor(
    private readonly tracing: OtelTracing,
    private readonly span: Span,
    readonly parent: SpanParent,
  ) {}

  setOutcome(outcome: AttemptOutcome): void {
    const attributes: Attributes = {};
    put(attributes, BENCHFLEET.outcomeStatus, outcome.status);
    put(attributes, BENCHFLEET.outcomeErrorClass, outcome.errorClass);
    put(attributes, BENCHFLEET.outcomeSuccess, outcome.success);
    put(attributes, BENCHFLEET.outcomeReward, outcome.reward);
    put(attributes, BENCHFLEET.outcomeSteps, outcome.totalSteps);
    put(attributes, BENCHFLEET.outcomeStopReason, outcome.stopReason);
    put(attributes, BENCHFLEET.inputTokens, outcome.tokensIn);
    put(attributes, BENCHFLEET.outputTokens, outcome.tokensOut);
    put(attributes, BENCHFLEET.costUsd, outcome.costUsd);
    if (outcome.status === 'error') {
      put(attributes, GENERAL.errorType, outcome.errorClass ?? ERROR_TYPE_OTHER);
      this.span.setStatus({
        code: SpanStatusCode.ERROR,
        ...(outcome.error && { message: shortMessage(outcome.error) }),
      });
    }
    this.span.setAttributes(attributes);
    this.#outcomeSet = true;
  }

  recordStep(step: StepAttributes): void {
    this.tracing.recordStep(this.parent, step);
  }

  /** The attempt's code threw: the outcome it recorded, if any, already says what happened. */
  threw(error: unknown): void {
    if (this.#outcomeSet) return;
    this.span.setAttribute(GENERAL.errorType, errorTypeOf(error));
    this.span.recordException({ name: errorTypeOf(error), message: shortMessage(error) });
    this.span.setStatus({ code: SpanStatusCode.ERROR, message: shortMessage(error) });
  }
}

class OtelStepSpan implements StepSpan {
  latencySet = false;

  constructor(private readonly span: Span) {}

  set(step: Partial<StepAttributes>): void {
    if (step.latencyMs !== undefined && step.latencyMs !== null) this.latencySet = true;
    this.span.setAttributes(stepAttributes(step));
  }
}

class OtelLlmCall implements LlmCallSpan {
  #ended = false;

  constructor(private readonly span: Span) {}

  end(result: LlmCallEnd): void {
    if (this.#ended) return;
    this.#ended = true;
    const attributes: Attributes = {};
    put(attributes, BENCHFLEET.llmOutcome, result.outcome);
    put(attributes, GENAI.responseModel, result.responseModel);
    put(attributes, GENAI.responseId, result.responseId);
    if (result.finishReasons !== undefined && result.finishReasons.length > 0)
      attributes[GENAI.responseFinishReasons] = [...result.finishReasons];
    put(attributes, GENAI.usageInputTokens, result.inputTokens);
    put(attributes, GENAI.usageOutputTokens, result.outputTokens);
    put(attributes, BENCHFLEET.costUsd, result.costUsd);
    put(attributes, BENCHFLEET.llmWaitedMs, result.waitedMs);
    if (result.outcome !== 'ok') {
      attributes[GENERAL.errorType] = result.errorType ?? ERROR_TYPE_OTHER;
      this.span.setStatus({ code: SpanStatusCode.ERROR });
    }
    this.span.setAttributes(attributes);
    this.span.end();
  }
}

class OtelTracing implements Telemetry {
  readonly enabled = true;
  readonly #tracer: Tracer;
  /** A fleet calls a handful of endpoints: each base URL is parsed once. */
  readonly #endpoints = new Map<string, LlmEndpoint>();
  /** The attempts running in this process, for `attemptParentOf`. */
  readonly #attempts = new Map<string, SpanParent>();
  #shutdown: Promise<TelemetryShutdown> | undefined;

  constructor(
    private readonly provider: TracerProvider,
    private readonly exporter: ReportedExporter,
    private readonly logger: Logger,
    private readonly repeated: RepeatedLog,
    private readonly endpoint: string,
    private readonly deadlineMs: number,
    private readonly onShutdown: () => void,
    /** Chat spans carry the prompt (`gen_ai.input.messages`): off unless asked for. */
    private readonly captureMessageContent = false,
  ) {
    this.#tracer = provider.getTracer(TRACER_NAME, BENCHFLEET_VERSION);
  }

  async attemptSpan<T>(attempt: AttemptStart, run: (span: AttemptSpan) => Promise<T>) {
    const attributes: Attributes = {};
    put(attributes, BENCHFLEET.runId, attempt.runId);
    put(attributes, BENCHFLEET.taskId, attempt.taskId);
    put(attributes, BENCHFLEET.attempt, attempt.attempt);
    put(attributes, BENCHFLEET.benchmark, attempt.benchmark);
    put(attributes, BENCHFLEET.domain, attempt.domain);
    put(attributes, BENCHFLEET.workerId, attempt.workerId);
    const links = linkTo(attempt.enqueuedBy);
    const span = this.#tracer.startSpan(BENCHFLEET_SPANS.attempt, {
      kind: SpanKind.INTERNAL,
      attributes,
      ...(links && { links }),
    });
    const active = trace
      .setSpan(context.active(), span)
      .setValue(ATTEMPT_ATTRIBUTION, attemptKeyOf(attempt));
    const handle = new OtelAttemptSpan(this, span, active as unknown as SpanParent);
    const key = attemptKey(attempt);
    this.#attempts.set(key, handle.parent);
    return context.with(active, async () => {
      try {
        return await run(handle);
      } catch (error) {
        handle.threw(error);
        throw error;
      } finally {
        if (this.#attempts.get(key) === handle.parent) this.#attempts.delete(key);
        span.end();
      }
    });
  }

  attemptParentOf(key: AttemptKey): SpanParent | undefined {
    return this.#attempts.get(attemptKey(key));
  }

  async enqueueSpan<T>(enqueue: EnqueueStart, run: () => Promise<T>): Promise<T> {
    const span = this.#tracer.startSpan(BENCHFLEET_SPANS.enqueue, {
      kind: SpanKind.PRODUCER,
      attributes: {
        [BENCHFLEET.runId]: enqueue.runId,
        [BENCHFLEET.benchmark]: enqueue.benchmark,
        [BENCHFLEET.enqueueOperation]: enqueue.operation,
        [MESSAGING.system]: 'bullmq',
        [MESSAGING.operationType]: 'send',
        [MESSAGING.destinationName]: enqueue.queue,
        [MESSAGING.batchMessageCount]: enqueue.tasks,
      },
    });
    return context.with(trace.setSpan(context.active(), span), async () => {
      try {
        return await run();
      } catch (error) {
        span.setAttribute(GENERAL.errorType, errorTypeOf(error));
        span.setStatus({ code: SpanStatusCode.ERROR, message: shortMessage(error) });
        throw error;
      } finally {
        span.end();
      }
    });
  }

  traceparent(): string | undefined {
    if (trace.getSpan(context.active()) === undefined) return undefined;
    const carrier: Record<string, string> = {};
    w3c.inject(context.active(), carrier, defaultTextMapSetter);
    return carrier['traceparent'];
  }

  async stepSpan<T>(
    parent: SpanParent | undefined,
    step: StepAttributes,
    run: (span: StepSpan) => Promise<T>,
  ) {
    const started = performance.now();
    const within = this.#contextOf(parent);
    const span = this.#tracer.startSpan(
      BENCHFLEET_SPANS.step,
      { kind: SpanKind.INTERNAL, attributes: stepAttributes(step) },
      within,
    );
    const handle = new OtelStepSpan(span);
    if (step.latencyMs !== undefined && step.latencyMs !== null) handle.latencySet = true;
    return context.with(trace.setSpan(within, span), async () => {
      try {
        return await run(handle);
      } catch (error) {
        span.setAttribute(GENERAL.errorType, errorTypeOf(error));
        span.setStatus({ code: SpanStatusCode.ERROR, message: shortMessage(error) });
        throw error;
      } finally {
        if (!handle.latencySet)
          span.setAttribute(BENCHFLEET.stepLatencyMs, Math.round(performance.now() - started));
        span.end();
      }
    });
  }

  recordStep(parent: SpanParent | undefined, step: StepAttributes): void {
    const ended = Date.now();
    const latency = step.latencyMs !== undefined && step.latencyMs !== null ? step.latencyMs : 0;
    const span = this.#tracer.startSpan(
      BENCHFLEET_SPANS.step,
      {
        kind: SpanKind.INTERNAL,
        attributes: stepAttributes(step),
        startTime: ended - Math.max(0, latency),
      },
      this.#contextOf(parent),
    );
    span.end(ended);
  }

  within<T>(parent: SpanParent | undefined, run: () => T): T {
    return parent === undefined ? run() : context.with(parent as unknown as Context, run);
  }

  startLlmCall(call: LlmCallStart): LlmCallSpan {
    let endpoint = this.#endpoints.get(call.baseUrl);
    if (endpoint === undefined) {
      if (this.#endpoints.size >= MAX_ENDPOINTS) this.#endpoints.clear();
      endpoint = llmEndpointOf(call.baseUrl);
      this.#endpoints.set(call.baseUrl, endpoint);
    }
    const operation = call.operation ?? 'chat';
    const attributes: Attributes = {
      [GENAI.operationName]: operation,
      [GENAI.providerName]: call.providerName ?? endpoint.providerName,
    };
    put(attributes, GENAI.requestModel, call.model === '' ? undefined : call.model);
    put(attributes, GENERAL.serverAddress, endpoint.serverAddress);
    put(attributes, GENERAL.serverPort, endpoint.serverPort);
    put(attributes, GENAI.requestMaxTokens, call.maxTokens);
    put(attributes, GENAI.requestTemperature, call.temperature);
    put(attributes, GENAI.requestTopP, call.topP);
    put(attributes, BENCHFLEET.llmKeyFingerprint, call.keyFingerprint);
    put(attributes, BENCHFLEET.runId, call.attribution?.runId);
    put(attributes, BENCHFLEET.taskId, call.attribution?.taskId);
    put(attributes, BENCHFLEET.attempt, call.attribution?.attempt);
    if (this.captureMessageContent && call.inputMessages !== undefined)
      put(attributes, GENAI.inputMessages, genAiInputMessages(call.inputMessages));
    const name = call.model === '' ? operation : `${operation} ${call.model}`;
    return new OtelLlmCall(this.#tracer.startSpan(name, { kind: SpanKind.CLIENT, attributes }));
  }

  async flush(): Promise<void> {
    await this.#withinDeadline(this.provider.forceFlush({ timeoutMillis: this.deadlineMs }));
  }

  shutdown(): Promise<TelemetryShutdown> {
    this.#shutdown ??= (async () => {
      // The failures of exports still retrying are told before the count of repeats is flushed.
      const completed = await this.#withinDeadline(
        this.provider.shutdown().then(() => this.exporter.settled()),
      );
      if (!completed)
        this.logger.warn(
          { endpoint: this.endpoint, deadlineMs: this.deadlineMs },
          'tracing: the collector did not take the last spans before the shutdown deadline; they were dropped',
        );
      this.repeated.flush();
      trace.disable();
      this.onShutdown();
      return { completed };
    })();
    return this.#shutdown;
  }

  /** True when `work` settled before the deadline; a failure is logged by the exporter already. */
  async #withinDeadline(work: Promise<void>): Promise<boolean> {
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<false>((resolve) => {
      timer = setTimeout(() => resolve(false), this.deadlineMs);
    });
    try {
      return await Promise.race([
        work.then(
          () => true,
          () => true,
        ),
        deadline,
      ]);
    } finally {
      clearTimeout(timer);
    }
  }

  #contextOf(parent: SpanParent | undefined): Context {
    return parent === undefined ? context.active() : (parent as unknown as Context);
  }
}

function attemptKeyOf(attempt: AttemptStart): AttemptKey {
  return { runId: attempt.runId, taskId: attempt.taskId, attempt: attempt.attempt };
}

function attemptKey(key: AttemptKey): string {
  return `${key.runId}\u0000${key.taskId}\u0000${key.attempt}`;
}

/** A link to the span a W3C `traceparent` names; undefined when there is none or it is malformed. */
function linkTo(traceparent: string | undefined): Link[] | undefined {
  if (traceparent === undefined) return undefined;
  const extracted = w3c.extract(ROOT_CONTEXT, { traceparent }, defaultTextMapGetter);
  const spanContext = trace.getSpanContext(extracted);
  return spanContext && trace.isSpanContextValid(spanContext)
    ? [{ context: spanContext }]
    : undefined;
}

/** Builds the SDK pipeline: resource, batching processor, OTLP exporter of the configured encoding. */
export async function startOtelTracing(
  config: TelemetryOn,
  options: StartTelemetryOptions,
  onShutdown: () => void,
): Promise<Telemetry> {
  const logger = options.logger ?? createLogger({ level: 'warn', name: options.serviceName });
  const repeated = new RepeatedLog(logger, options.logIntervalMs ?? DEFAULT_LOG_INTERVAL_MS);
  const endpoint = displayEndpoint(config.tracesUrl);
  const deadlineMs = options.shutdownTimeoutMs ?? DEFAULT_SHUTDOWN_TIMEOUT_MS;
  // No export may outlive a shutdown: its deadline, retries included, is capped at the shutdown's.
  const exportTimeoutMs = Math.min(config.exportTimeoutMs, deadlineMs);

  const exporterOptions = {
    url: config.tracesUrl,
    headers: { ...config.headers },
    timeoutMillis: exportTimeoutMs,
    compression: config.compression,
  };
  // Protobuf (the default) through this package's encoder; JSON through the SDK's exporter.
  const exporter =
    config.protocol === 'http/json'
      ? new (await import('@opentelemetry/exporter-trace-otlp-http')).OTLPTraceExporter({
          ...exporterOptions,
          compression: config.compression as CompressionOption,
        })
      : (await import('./otlp-protobuf-exporter.js')).protobufTraceExporter(exporterOptions);

  // Errors the exporter told already are not told again by the SDK's global handler.
  const told = new WeakSet<object>();
  const report = (error: unknown, spans: number): void => {
    if (typeof error === 'object' && error !== null) told.add(error);
    repeated.warn(
      `otlp-export ${causeOf(error ?? 'failed')}`,
      { endpoint, spans, err: shortMessage(error ?? 'export failed') },
      'tracing: could not export spans to the OpenTelemetry collector; they are dropped and the worker goes on',
    );
  };
  setGlobalErrorHandler((error) => {
    if (typeof error === 'object' && error !== null && told.has(error)) return;
    if (errorMessage(error).startsWith('BatchSpanProcessor: span export failed')) return;
    repeated.warn(
      `otel ${causeOf(error)}`,
      { err: shortMessage(error) },
      'tracing: OpenTelemetry SDK error',
    );
  });
  const diagnose = (...args: unknown[]): void => {
    const message = args
      .map((arg) => (typeof arg === 'string' ? arg : errorMessage(arg)))
      .join(' ');
    repeated.warn(`otel-diag ${causeOf(message)}`, {}, `tracing: ${shortMessage(message)}`);
  };
  diag.setLogger(
    { error: diagnose, warn: diagnose, info: () => {}, debug: () => {}, verbose: () => {} },
    { logLevel: DiagLogLevel.WARN, suppressOverrideMessage: true },
  );

  if (contextManager === undefined) {
    contextManager = new AsyncLocalStorageContextManager().enable();
    context.setGlobalContextManager(contextManager);
  }

  const resource = defaultResource().merge(
    resourceFromAttributes({
      [GENERAL.serviceName]: options.serviceName,
      ...options.resourceAttributes,
      ...config.resourceAttributes,
      ...(config.serviceName !== undefined && { [GENERAL.serviceName]: config.serviceName }),
    }),
  );
  const reported = new ReportedExporter(exporter, report);
  const provider = new TracerProvider({
    resource,
    spanProcessors: [
      // Before the batching processor: the ids are set when the span starts.
      new AttemptAttributionProcessor(),
      new BatchSpanProcessor({
        exporter: reported,
        exportTimeoutMillis: exportTimeoutMs,
        ...(config.batch.scheduledDelayMs !== undefined && {
          scheduledDelayMillis: config.batch.scheduledDelayMs,
        }),
        ...(config.batch.maxExportBatchSize !== undefined && {
          maxExportBatchSize: config.batch.maxExportBatchSize,
        }),
        ...(config.batch.maxQueueSize !== undefined && { maxQueueSize: config.batch.maxQueueSize }),
      }),
    ],
  });
  trace.setGlobalTracerProvider(provider);
  logger.info(
    { endpoint, protocol: config.protocol, service: resource.attributes[GENERAL.serviceName] },
    'tracing: exporting spans over OTLP',
  );
  return new OtelTracing(
    provider,
    reported,
    logger,
    repeated,
    endpoint,
    deadlineMs,
    onShutdown,
    config.captureMessageContent,
  );
}
