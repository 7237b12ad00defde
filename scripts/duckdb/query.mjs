#!/usr/bin/env node
// Runs SQL statements in an in-memory DuckDB and prints, for each, its
// columns' names and types and its rows as JSON (big integers and
// decimals as strings, every digit kept), one JSON document on stdout:
//
//	[{"columns": ["n"], "types": ["BIGINT"], "rows": [{"n": "3"}]}, ...]
//
// Usage: node query.mjs MODULES_DIR SQL...
// MODULES_DIR is the folder where `npm ci` installed this package (it
// holds node_modules/@duckdb/node-api): scripts/duckdb/install.sh prints
// it. timetable's tests read the Parquet files they write with it, through
// a reader no one here wrote (internal/duckdbtest).
import { createRequire } from 'node:module'
import path from 'node:path'
import { pathToFileURL } from 'node:url'

const [modules, ...statements] = process.argv.slice(2)
if (!modules || statements.length === 0) {
  console.error('usage: query.mjs MODULES_DIR SQL...')
  process.exit(2)
}
const require = createRequire(path.join(path.resolve(modules), 'package.json'))
const { DuckDBInstance } = await import(pathToFileURL(require.resolve('@duckdb/node-api')).href)

const instance = await DuckDBInstance.create(':memory:')
const connection = await instance.connect()
const out = []
for (const sql of statements) {
  const reader = await connection.runAndReadAll(sql)
  out.push({
    columns: reader.columnNames(),
    types: reader.columnTypes().map(String),
    rows: reader.getRowObjectsJson(),
  })
}
process.stdout.write(JSON.stringify(out) + '\n')
