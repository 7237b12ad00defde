#!/usr/bin/env node
// Starts dynalite, in memory, on a free 127.0.0.1 port chosen by the kernel
// (port 0), and prints "PORT <n>" on stdout once it listens, so the caller
// never races another process for a port.
//
// Usage: node start.js MODULES_DIR [--createTableMs N] [--deleteTableMs N] [--updateTableMs N]
// MODULES_DIR is the folder where `npm ci` installed this package (it holds
// node_modules/dynalite).
'use strict'

const path = require('path')

const modules = process.argv[2]
if (!modules) {
  console.error('usage: start.js MODULES_DIR [--createTableMs N] ...')
  process.exit(2)
}

const opts = {}
const args = process.argv.slice(3)
for (let i = 0; i < args.length; i += 2) {
  const m = /^--(createTableMs|deleteTableMs|updateTableMs)$/.exec(args[i])
  if (!m || args[i + 1] === undefined) {
    console.error('start.js: unknown option ' + args[i])
    process.exit(2)
  }
  opts[m[1]] = Number(args[i + 1])
}

const dynalite = require(require.resolve('dynalite', { paths: [path.resolve(modules)] }))
const server = dynalite(opts)
server.listen(0, '127.0.0.1', () => {
  process.stdout.write('PORT ' + server.address().port + '\n')
})

// Exit at once on the signals the wrapper sends: the data lives in memory
// only, and a graceful close would wait for every keep-alive connection.
for (const sig of ['SIGTERM', 'SIGINT']) {
  process.on(sig, () => process.exit(0))
}
