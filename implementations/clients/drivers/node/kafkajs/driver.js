// ktc's driver for KafkaJS (npm kafkajs): JSON lines on stdin, one JSON answer per line on stdout
// (implementations/clients/README.md). It uses KafkaJS's producer, consumer and admin as an application would and
// judges nothing; every error the library throws is answered as ok:false.
//
// KafkaJS has no consumer without a group: a consume request joins a fresh group, subscribes from the beginning
// and skips the records before the offset asked (no seek). It hands
// back one base offset per partition from send(), so a record's offset is base + its index, and no timestamps.
'use strict'

const readline = require('readline')
const { Kafka, CompressionTypes, logLevel } = require('kafkajs')
const { version } = require('kafkajs/package.json')

console.log = console.error // nothing but answers on stdout
const logCreator = () => ({ namespace, log }) => process.stderr.write(`${namespace} ${JSON.stringify(log)}\n`)
const CODECS = {
  none: CompressionTypes.None,
  gzip: CompressionTypes.GZIP,
  snappy: CompressionTypes.Snappy,
  lz4: CompressionTypes.LZ4,
  zstd: CompressionTypes.ZSTD,
}

const client = req =>
  new Kafka({
    clientId: 'ktc-driver',
    brokers: [req.bootstrap],
    logLevel: logLevel.WARN,
    logCreator,
    requestTimeout: req.timeout_ms || 15000,
  })

const bytes = b64 => (b64 == null ? null : Buffer.from(b64, 'base64'))
const base64 = buffer => (buffer == null ? null : Buffer.from(buffer).toString('base64'))

async function produce(req) {
  const producer = client(req).producer({ idempotent: false, allowAutoTopicCreation: false })
  await producer.connect()
  try {
    const partition = Number(req.partition)
    const messages = req.records.map(r => {
      const message = { partition, key: bytes(r.key), value: bytes(r.value) }
      if (r.timestamp != null) message.timestamp = r.timestamp // KafkaJS takes ms as a string
      return message
    })
    const codec = req.compression || 'none'
    if (!(codec in CODECS)) return localError(`unknown compression ${codec}`)
    const sent = Date.now()
    const metadata = await producer.send({
      topic: req.topic, messages, acks: -1, timeout: req.timeout_ms || 15000, compression: CODECS[codec],
    })
    const acked = Date.now()
    const base = BigInt(metadata.find(m => m.partition === partition).baseOffset)
    return {
      ok: true,
      offsets: req.records.map((_, i) => String(base + BigInt(i))),
      timestamps: req.records.map(() => null),
      sent_ms: String(sent),
      acked_ms: String(acked),
    }
  } finally {
    await producer.disconnect()
  }
}

async function consume(req) {
  const consumer = client(req).consumer({
    groupId: `ktc-driver-${process.pid}-${Date.now()}-${Math.random().toString(36).slice(2)}`,
    maxWaitTimeInMs: 100,
    allowAutoTopicCreation: false,
  })
  const partition = Number(req.partition)
  const from = BigInt(req.offset)
  const rows = []
  let failed = null
  await consumer.connect()
  try {
    // A fresh group reading from the beginning starts at the log start; records before the asked offset are
    // skipped here. No seek: a seek before the group has joined is refused on 1.x ("Consumer group was not
    // initialized") and races the first fetch on 2.x, which lost offset 0.
    await consumer.subscribe({ topic: req.topic, fromBeginning: true })
    let finish
    const done = new Promise(resolve => (finish = resolve))
    const timer = setTimeout(finish, req.timeout_ms || 15000)
    consumer.on(consumer.events.CRASH, ({ payload }) => {
      // A retriable crash (a group coordinator still starting) restarts the consumer: keep waiting. Any other
      // (a batch in a codec it lacks) ends the request with the library's error.
      failed = payload.error
      if (!restarts(payload)) finish()
    })
    await consumer.run({
      autoCommit: false,
      eachMessage: async ({ partition: p, message }) => {
        if (p !== partition || rows.length >= req.count || BigInt(message.offset) < from) return
        rows.push({
          offset: String(message.offset),
          timestamp: String(message.timestamp),
          timestamp_type: null, // KafkaJS hands the application no timestamp type
          key: base64(message.key),
          value: base64(message.value),
        })
        if (rows.length >= req.count) finish()
      },
    })
    await done
    clearTimeout(timer)
    if (failed != null && rows.length < req.count) return failure(failed)
    return { ok: true, records: rows }
  } finally {
    await consumer.disconnect()
  }
}

// Whether KafkaJS restarts a crashed consumer: 2.x says so (payload.restart); 1.x restarts on these errors.
const restarts = ({ restart, error }) =>
  restart != null ? restart : error.name === 'KafkaJSNumberOfRetriesExceeded' || error.retriable === true

async function withAdmin(req, use) {
  const admin = client(req).admin()
  await admin.connect()
  try {
    return await use(admin)
  } finally {
    await admin.disconnect()
  }
}

const offsetsForTimes = req =>
  withAdmin(req, async admin => {
    if (typeof admin.fetchTopicOffsetsByTimestamp !== 'function') {
      return localError(`unsupported op: kafkajs ${version} has no admin.fetchTopicOffsetsByTimestamp`)
    }
    const listed = await admin.fetchTopicOffsetsByTimestamp(req.topic, Number(req.timestamp))
    const hit = listed.find(p => p.partition === Number(req.partition))
    if (hit == null || hit.offset == null) return { ok: true, found: false }
    return { ok: true, found: true, offset: String(hit.offset), timestamp: null }
  })

const createTopic = req =>
  withAdmin(req, async admin => {
    const configEntries = Object.entries(req.configs || {}).map(([name, value]) => ({ name, value: String(value) }))
    const topic = { topic: req.topic, numPartitions: req.partitions || 1, replicationFactor: 1, configEntries }
    const created = await admin.createTopics({ topics: [topic], waitForLeaders: true })
    return created ? { ok: true } : localError('createTopics answered false: the topic exists')
  })

const OPS = {
  hello: async () => ({ ok: true, library: 'kafkajs', version, language: 'javascript' }),
  produce,
  consume,
  offsets_for_times: offsetsForTimes,
  create_topic: createTopic,
}

function localError(message) {
  return { ok: false, error: { kind: 'local', code: null, retriable: null, message, record: null } }
}

function failure(error) {
  const cause = error && error.originalError ? error.originalError : error
  const broker = cause && typeof cause.code === 'number' && cause.type
  const timeout = /Timeout/i.test(`${cause && cause.name} ${error && error.name}`)
  const message = error === cause ? `${error.name}: ${error.message}` : `${error.name}: ${error.message} (${cause.name}: ${cause.message})`
  return {
    ok: false,
    error: {
      kind: timeout ? 'timeout' : broker ? 'broker' : 'local',
      code: broker ? cause.code : null,
      retriable: error && typeof error.retriable === 'boolean' ? error.retriable : null,
      message,
      record: null,
    },
  }
}

async function answer(line) {
  let req
  try {
    req = JSON.parse(line)
  } catch (error) {
    return failure(error)
  }
  const op = OPS[req.op]
  if (op == null) return localError(`unknown op ${req.op}`)
  try {
    return await op(req)
  } catch (error) {
    return failure(error)
  }
}

async function main() {
  const lines = readline.createInterface({ input: process.stdin, crlfDelay: Infinity })
  for await (const line of lines) {
    if (line.trim() === '') continue
    process.stdout.write(JSON.stringify(await answer(line)) + '\n')
  }
  process.exit(0)
}

main()
