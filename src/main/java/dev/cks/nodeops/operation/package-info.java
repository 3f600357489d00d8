/**
 * The node-operation kit: what ScaleDown and NodeUpgrade share, by composition — the result of a step
 * ({@link dev.cks.nodeops.operation.Step}), the one writer of an operation's conditions, events and
 * metrics ({@link dev.cks.nodeops.operation.OperationRecorder}), the work done on nodes behind a port
 * ({@link dev.cks.nodeops.operation.NodeWork}: lock, cordon, one drain tick, release), the preflight
 * gate and the drain tick's one rule for "blocked". Each operation keeps its own phase graph.
 */
package dev.cks.nodeops.operation;
