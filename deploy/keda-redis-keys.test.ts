import { QueueKeys, Worker } from 'bullmq';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { queuePrefixSchema } from '@benchfleet/core';
import { createRedisConnection, JobProducer, taskJobId } from '@benchfleet/queue';
import { webshopBenchmark } from '@benchfleet/webshop-benchmark';
import { useTestServices } from '@benchfleet/testing';
import { ScaledObject } from '@kubernetes-models/keda/keda.sh/v1alpha1/ScaledObject';
import { k8sObject, readK8sManifests } from './k8s-manifests.js';

// KEDA's redis scaler counts LLEN of a key it is given literally: if that key is not the one BullMQ
// fills, the fleet never scales. The keys are built here the way BullMQ builds them (QueueKeys),
// from the queue the job catalog assigns and the prefix the config defaults to.
const services = useTestServices();
const QUEUE = webshopBenchmark.job.queue;
let producer: JobProducer;

beforeAll(() => {
  producer = new JobProducer(services.redisUrl, services.prefix);
});

afterAll(async () => {
  await producer.queue(QUEUE).obliterate({ force: true });
  await producer.close();
});

describe('the Redis keys the KEDA ScaledObject watches', () => {
  it('are the wait and active lists of the webshop queue under the default prefix', () => {
    const keys = new QueueKeys(queuePrefixSchema.parse(undefined));
    const scaledObject = k8sObject(readK8sManifests(), ScaledObject, 'worker-webshop');
    const watched = scaledObject.spec.triggers.map((trigger) => trigger.metadata.listName).sort();
    expect(watched).toEqual([keys.toKey(QUEUE, 'active'), keys.toKey(QUEUE, 'wait')].sort());
    expect(watched).toEqual(['{benchfleet}:webshop:active', '{benchfleet}:webshop:wait']);
  });

  it('are lists that a real queue fills: a waiting job in <prefix>:webshop:wait, a taken one in <prefix>:webshop:active', async () => {
    const keys = new QueueKeys(services.prefix);
    const wait = keys.toKey(QUEUE, 'wait');
    const active = keys.toKey(QUEUE, 'active');
    expect([wait, active]).toEqual([
      `${services.prefix}:webshop:wait`,
      `${services.prefix}:webshop:active`,
    ]);
    const redis = producer.connection;

    await producer.enqueue(webshopBenchmark.job, {
      jobId: taskJobId('run-keda', 'goal-00001'),
      payload: { runId: 'run-keda', taskId: 'goal-00001' },
    });
    expect(await redis.type(wait)).toBe('list');
    expect(await redis.llen(wait)).toBe(1);

    // A worker taking the job moves it from the wait list to the active list.
    const connection = createRedisConnection(services.redisUrl, 'worker');
    const worker = new Worker(QUEUE, null, { connection, prefix: services.prefix, autorun: false });
    try {
      const token = 'keda-test';
      const job = await worker.getNextJob(token);
      expect(job?.id).toBe(taskJobId('run-keda', 'goal-00001'));
      expect(await redis.llen(wait)).toBe(0);
      expect(await redis.type(active)).toBe('list');
      expect(await redis.llen(active)).toBe(1);
      await job!.moveToCompleted('done', token, false);
      expect(await redis.llen(active)).toBe(0);
    } finally {
      await worker.close();
      connection.disconnect();
    }
  });
});
