/**
 * The proxy's auditing thread: an entry module, loaded only as a worker by the proxy
 * (see `auditor.ts`). It reads the ring the forwarding thread fills, audits every line
 * with `lineAudit`, posts each warning back, and publishes in the ring's control block
 * how far it has audited and whether a listing is awaited. It blocks on the ring
 * between writes, so it has no other work.
 *
 * @since 0.1.0
 */
import type { MessagePort } from 'node:worker_threads'
import { parentPort, workerData } from 'node:worker_threads'
import { isAuditWorkerData } from './auditor.js'
import type { AuditWorkerData, FromAuditWorker } from './auditor.js'
import { lineAudit } from './lineaudit.js'
import { ringReader, Slot } from './ring.js'

const run = (port: MessagePort, data: AuditWorkerData): void => {
  const post = (m: FromAuditWorker): void => port.postMessage(m)
  const reader = ringReader(data.memory)
  const control = reader.control
  const audit = lineAudit(data.tolerate, (warning) => post({ type: 'warning', warning }))
  // a writer waiting for room hears of it once half the ring is free, not after every
  // record: each message costs both threads a turn
  const half = data.memory.data.byteLength / 2
  const freed = (free: number): void => {
    if (free >= half && Atomics.compareExchange(control, Slot.wantsRoom, 1, 0) === 1) post({ type: 'room' })
  }
  for (;;) {
    const upTo = reader.take((side, bytes) => audit.feed(side === 0 ? 'host' : 'server', bytes), freed)
    Atomics.store(control, Slot.awaiting, audit.awaitingListing() ? 1 : 0)
    Atomics.store(control, Slot.processed, upTo | 0)
    if (reader.finished()) break
    reader.wait()
  }
  post({ type: 'drained' })
}

if (parentPort !== null && isAuditWorkerData(workerData)) run(parentPort, workerData)
