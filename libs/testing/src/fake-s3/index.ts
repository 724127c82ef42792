export * from './fake-s3-server.js';
