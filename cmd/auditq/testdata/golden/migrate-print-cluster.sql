-- migration 1: otel_traces
CREATE TABLE IF NOT EXISTS `otel`.`otel_traces` ON CLUSTER `audit` (
    Timestamp DateTime64(9) CODEC(Delta, ZSTD(1)),
    TraceId String CODEC(ZSTD(1)),
    SpanId String CODEC(ZSTD(1)),
    ParentSpanId String CODEC(ZSTD(1)),
    TraceState String CODEC(ZSTD(1)),
    SpanName LowCardinality(String) CODEC(ZSTD(1)),
    SpanKind LowCardinality(String) CODEC(ZSTD(1)),
    ServiceName LowCardinality(String) CODEC(ZSTD(1)),
    ResourceAttributes Map(LowCardinality(String), String) CODEC(ZSTD(1)),
    ScopeName String CODEC(ZSTD(1)),
    ScopeVersion String CODEC(ZSTD(1)),
    SpanAttributes Map(LowCardinality(String), String) CODEC(ZSTD(1)),
    Duration UInt64 CODEC(ZSTD(1)),
    StatusCode LowCardinality(String) CODEC(ZSTD(1)),
    StatusMessage String CODEC(ZSTD(1)),
    Events Nested (
        Timestamp DateTime64(9),
        Name LowCardinality(String),
        Attributes Map(LowCardinality(String), String)
    ) CODEC(ZSTD(1)),
    Links Nested (
        TraceId String,
        SpanId String,
        TraceState String,
        Attributes Map(LowCardinality(String), String)
    ) CODEC(ZSTD(1)),
    INDEX idx_trace_id TraceId TYPE bloom_filter(0.001) GRANULARITY 1,
    INDEX idx_res_attr_key mapKeys(ResourceAttributes) TYPE bloom_filter(0.01) GRANULARITY 1,
    INDEX idx_res_attr_value mapValues(ResourceAttributes) TYPE bloom_filter(0.01) GRANULARITY 1,
    INDEX idx_span_attr_key mapKeys(SpanAttributes) TYPE bloom_filter(0.01) GRANULARITY 1,
    INDEX idx_span_attr_value mapValues(SpanAttributes) TYPE bloom_filter(0.01) GRANULARITY 1,
    INDEX idx_duration Duration TYPE minmax GRANULARITY 1
) ENGINE = ReplicatedMergeTree('/clickhouse/tables/{shard}/{database}/{table}', '{replica}')
PARTITION BY toDate(Timestamp)
ORDER BY (ServiceName, SpanName, toDateTime(Timestamp))
TTL toDateTime(Timestamp) + toIntervalDay(365)
SETTINGS index_granularity = 8192, ttl_only_drop_parts = 1;

-- migration 2: gate_decisions
CREATE TABLE IF NOT EXISTS `otel`.`gate_decisions` ON CLUSTER `audit` (
    Timestamp DateTime64(9) CODEC(Delta, ZSTD(1)),
    InsertedAt DateTime64(9) CODEC(Delta, ZSTD(1)),
    TraceId String CODEC(ZSTD(1)),
    SpanId String CODEC(ZSTD(1)),
    ParentSpanId String CODEC(ZSTD(1)),
    ServiceName LowCardinality(String) CODEC(ZSTD(1)),
    Agent LowCardinality(String) CODEC(ZSTD(1)),
    RunId String CODEC(ZSTD(1)),
    TaskId String CODEC(ZSTD(1)),
    ToolName LowCardinality(String) CODEC(ZSTD(1)),
    ToolCallId String CODEC(ZSTD(1)),
    Gated Bool,
    OptOut Bool,
    Action LowCardinality(String) CODEC(ZSTD(1)),
    Reason String CODEC(ZSTD(1)),
    Source LowCardinality(String) CODEC(ZSTD(1)),
    RiskLevel LowCardinality(String) CODEC(ZSTD(1)),
    Approval LowCardinality(String) CODEC(ZSTD(1)),
    Approver LowCardinality(String) CODEC(ZSTD(1)),
    ErrorKind LowCardinality(String) CODEC(ZSTD(1)),
    ErrorType LowCardinality(String) CODEC(ZSTD(1)),
    IsError Bool,
    StatusMessage String CODEC(ZSTD(1)),
    Duration UInt64 CODEC(ZSTD(1)),
    GateDuration UInt64 CODEC(ZSTD(1)),
    Input String CODEC(ZSTD(3)),
    Version UInt64 MATERIALIZED bitNot(toUInt64(toUnixTimestamp64Nano(InsertedAt))),
    INDEX idx_trace_id TraceId TYPE bloom_filter(0.001) GRANULARITY 1,
    INDEX idx_inserted_at InsertedAt TYPE minmax GRANULARITY 1
) ENGINE = ReplicatedReplacingMergeTree('/clickhouse/tables/{shard}/{database}/{table}', '{replica}', Version)
PARTITION BY toDate(Timestamp)
PRIMARY KEY (toStartOfHour(Timestamp), Action, Agent, ToolName, Timestamp)
ORDER BY (toStartOfHour(Timestamp), Action, Agent, ToolName, Timestamp, SpanId)
TTL toDateTime(Timestamp) + toIntervalDay(365)
SETTINGS index_granularity = 8192, ttl_only_drop_parts = 1;

-- migration 3: gate_decisions_mv
CREATE MATERIALIZED VIEW IF NOT EXISTS `otel`.`gate_decisions_mv` ON CLUSTER `audit` TO `otel`.`gate_decisions` AS
SELECT
    Timestamp AS Timestamp,
    now64(9) AS InsertedAt,
    TraceId AS TraceId,
    SpanId AS SpanId,
    ParentSpanId AS ParentSpanId,
    ServiceName AS ServiceName,
    SpanAttributes['gen_ai.agent.name'] AS Agent,
    SpanAttributes['toolgate.run.id'] AS RunId,
    SpanAttributes['toolgate.task.id'] AS TaskId,
    SpanAttributes['gen_ai.tool.name'] AS ToolName,
    SpanAttributes['gen_ai.tool.call.id'] AS ToolCallId,
    SpanAttributes['gate.gated'] = 'true' AS Gated,
    SpanAttributes['gate.opt_out'] = 'true' AS OptOut,
    SpanAttributes['gate.action'] AS Action,
    SpanAttributes['gate.reason'] AS Reason,
    SpanAttributes['gate.source'] AS Source,
    SpanAttributes['gate.risk.level'] AS RiskLevel,
    SpanAttributes['gate.approval'] AS Approval,
    SpanAttributes['gate.approver'] AS Approver,
    SpanAttributes['gate.error'] AS ErrorKind,
    SpanAttributes['error.type'] AS ErrorType,
    StatusCode = 'Error' AS IsError,
    StatusMessage AS StatusMessage,
    Duration AS Duration,
    toUInt64OrZero(SpanAttributes['gate.duration_ns']) AS GateDuration,
    SpanAttributes['gen_ai.tool.call.arguments'] AS Input
FROM `otel`.`otel_traces`
WHERE (mapContains(SpanAttributes, 'gate.action') OR SpanAttributes['gate.gated'] = 'true' OR SpanAttributes['gate.opt_out'] = 'true');

INSERT INTO `otel`.`gate_decisions` (Timestamp, InsertedAt, TraceId, SpanId, ParentSpanId, ServiceName, Agent, RunId, TaskId, ToolName, ToolCallId, Gated, OptOut, Action, Reason, Source, RiskLevel, Approval, Approver, ErrorKind, ErrorType, IsError, StatusMessage, Duration, GateDuration, Input)
SELECT
    Timestamp AS Timestamp,
    now64(9) AS InsertedAt,
    TraceId AS TraceId,
    SpanId AS SpanId,
    ParentSpanId AS ParentSpanId,
    ServiceName AS ServiceName,
    SpanAttributes['gen_ai.agent.name'] AS Agent,
    SpanAttributes['toolgate.run.id'] AS RunId,
    SpanAttributes['toolgate.task.id'] AS TaskId,
    SpanAttributes['gen_ai.tool.name'] AS ToolName,
    SpanAttributes['gen_ai.tool.call.id'] AS ToolCallId,
    SpanAttributes['gate.gated'] = 'true' AS Gated,
    SpanAttributes['gate.opt_out'] = 'true' AS OptOut,
    SpanAttributes['gate.action'] AS Action,
    SpanAttributes['gate.reason'] AS Reason,
    SpanAttributes['gate.source'] AS Source,
    SpanAttributes['gate.risk.level'] AS RiskLevel,
    SpanAttributes['gate.approval'] AS Approval,
    SpanAttributes['gate.approver'] AS Approver,
    SpanAttributes['gate.error'] AS ErrorKind,
    SpanAttributes['error.type'] AS ErrorType,
    StatusCode = 'Error' AS IsError,
    StatusMessage AS StatusMessage,
    Duration AS Duration,
    toUInt64OrZero(SpanAttributes['gate.duration_ns']) AS GateDuration,
    SpanAttributes['gen_ai.tool.call.arguments'] AS Input
FROM `otel`.`otel_traces`
WHERE (mapContains(SpanAttributes, 'gate.action') OR SpanAttributes['gate.gated'] = 'true' OR SpanAttributes['gate.opt_out'] = 'true');

-- migration 4: verdicts_rewrites
ALTER TABLE `otel`.`gate_decisions` ON CLUSTER `audit`
    ADD COLUMN IF NOT EXISTS Rewritten Bool,
    ADD COLUMN IF NOT EXISTS RewrittenBy LowCardinality(String) CODEC(ZSTD(1)),
    ADD COLUMN IF NOT EXISTS OriginalInputHash String CODEC(ZSTD(1)),
    ADD COLUMN IF NOT EXISTS Rounds UInt64 CODEC(ZSTD(1)),
    ADD COLUMN IF NOT EXISTS Verdicts Array(String) CODEC(ZSTD(1)),
    ADD COLUMN IF NOT EXISTS VerdictGates Array(LowCardinality(String)) DEFAULT arrayMap(v -> splitByChar('|', v)[1], arrayFilter(v -> splitByChar('|', v)[2] != 'more', if(notEmpty(Verdicts) OR (NOT Gated AND Action = ''), Verdicts, [concat(Source, '|', if(Approval != '', 'ask', Action), '|', RiskLevel, '|')]))) CODEC(ZSTD(1)),
    ADD COLUMN IF NOT EXISTS VerdictActions Array(LowCardinality(String)) DEFAULT arrayMap(v -> splitByChar('|', v)[2], arrayFilter(v -> splitByChar('|', v)[2] != 'more', if(notEmpty(Verdicts) OR (NOT Gated AND Action = ''), Verdicts, [concat(Source, '|', if(Approval != '', 'ask', Action), '|', RiskLevel, '|')]))) CODEC(ZSTD(1));

ALTER TABLE `otel`.`gate_decisions_mv` ON CLUSTER `audit` MODIFY QUERY
SELECT
    Timestamp AS Timestamp,
    now64(9) AS InsertedAt,
    TraceId AS TraceId,
    SpanId AS SpanId,
    ParentSpanId AS ParentSpanId,
    ServiceName AS ServiceName,
    SpanAttributes['gen_ai.agent.name'] AS Agent,
    SpanAttributes['toolgate.run.id'] AS RunId,
    SpanAttributes['toolgate.task.id'] AS TaskId,
    SpanAttributes['gen_ai.tool.name'] AS ToolName,
    SpanAttributes['gen_ai.tool.call.id'] AS ToolCallId,
    SpanAttributes['gate.gated'] = 'true' AS Gated,
    SpanAttributes['gate.opt_out'] = 'true' AS OptOut,
    SpanAttributes['gate.action'] AS Action,
    SpanAttributes['gate.reason'] AS Reason,
    SpanAttributes['gate.source'] AS Source,
    SpanAttributes['gate.risk.level'] AS RiskLevel,
    SpanAttributes['gate.approval'] AS Approval,
    SpanAttributes['gate.approver'] AS Approver,
    SpanAttributes['gate.error'] AS ErrorKind,
    SpanAttributes['error.type'] AS ErrorType,
    StatusCode = 'Error' AS IsError,
    StatusMessage AS StatusMessage,
    Duration AS Duration,
    toUInt64OrZero(SpanAttributes['gate.duration_ns']) AS GateDuration,
    SpanAttributes['gen_ai.tool.call.arguments'] AS Input,
    SpanAttributes['gate.rewritten'] = 'true' AS Rewritten,
    SpanAttributes['gate.rewritten_by'] AS RewrittenBy,
    SpanAttributes['gate.input.original_sha256'] AS OriginalInputHash,
    toUInt64OrZero(SpanAttributes['gate.rounds']) AS Rounds,
    if(startsWith(SpanAttributes['gate.verdicts'], '['), JSONExtract(SpanAttributes['gate.verdicts'], 'Array(String)'), if(SpanAttributes['gate.verdicts'] = '', [], [SpanAttributes['gate.verdicts']])) AS Verdicts
FROM `otel`.`otel_traces`
WHERE (mapContains(SpanAttributes, 'gate.action') OR SpanAttributes['gate.gated'] = 'true' OR SpanAttributes['gate.opt_out'] = 'true');

INSERT INTO `otel`.`gate_decisions` (Timestamp, InsertedAt, TraceId, SpanId, ParentSpanId, ServiceName, Agent, RunId, TaskId, ToolName, ToolCallId, Gated, OptOut, Action, Reason, Source, RiskLevel, Approval, Approver, ErrorKind, ErrorType, IsError, StatusMessage, Duration, GateDuration, Input, Rewritten, RewrittenBy, OriginalInputHash, Rounds, Verdicts)
SELECT
    Timestamp AS Timestamp,
    repaired.FirstInsertedAt AS InsertedAt,
    TraceId AS TraceId,
    SpanId AS SpanId,
    ParentSpanId AS ParentSpanId,
    ServiceName AS ServiceName,
    SpanAttributes['gen_ai.agent.name'] AS Agent,
    SpanAttributes['toolgate.run.id'] AS RunId,
    SpanAttributes['toolgate.task.id'] AS TaskId,
    SpanAttributes['gen_ai.tool.name'] AS ToolName,
    SpanAttributes['gen_ai.tool.call.id'] AS ToolCallId,
    SpanAttributes['gate.gated'] = 'true' AS Gated,
    SpanAttributes['gate.opt_out'] = 'true' AS OptOut,
    SpanAttributes['gate.action'] AS Action,
    SpanAttributes['gate.reason'] AS Reason,
    SpanAttributes['gate.source'] AS Source,
    SpanAttributes['gate.risk.level'] AS RiskLevel,
    SpanAttributes['gate.approval'] AS Approval,
    SpanAttributes['gate.approver'] AS Approver,
    SpanAttributes['gate.error'] AS ErrorKind,
    SpanAttributes['error.type'] AS ErrorType,
    StatusCode = 'Error' AS IsError,
    StatusMessage AS StatusMessage,
    Duration AS Duration,
    toUInt64OrZero(SpanAttributes['gate.duration_ns']) AS GateDuration,
    SpanAttributes['gen_ai.tool.call.arguments'] AS Input,
    SpanAttributes['gate.rewritten'] = 'true' AS Rewritten,
    SpanAttributes['gate.rewritten_by'] AS RewrittenBy,
    SpanAttributes['gate.input.original_sha256'] AS OriginalInputHash,
    toUInt64OrZero(SpanAttributes['gate.rounds']) AS Rounds,
    if(startsWith(SpanAttributes['gate.verdicts'], '['), JSONExtract(SpanAttributes['gate.verdicts'], 'Array(String)'), if(SpanAttributes['gate.verdicts'] = '', [], [SpanAttributes['gate.verdicts']])) AS Verdicts
FROM `otel`.`otel_traces`
INNER JOIN (
    SELECT SpanId, min(InsertedAt) AS FirstInsertedAt
    FROM `otel`.`gate_decisions`
    WHERE SpanId IN (SELECT SpanId FROM `otel`.`otel_traces` WHERE (mapContains(SpanAttributes, 'gate.rewritten') OR mapContains(SpanAttributes, 'gate.rewritten_by') OR mapContains(SpanAttributes, 'gate.input.original_sha256') OR mapContains(SpanAttributes, 'gate.rounds') OR mapContains(SpanAttributes, 'gate.verdicts')))
    GROUP BY SpanId
) AS repaired USING (SpanId)
WHERE (mapContains(SpanAttributes, 'gate.action') OR SpanAttributes['gate.gated'] = 'true' OR SpanAttributes['gate.opt_out'] = 'true')
  AND (mapContains(SpanAttributes, 'gate.rewritten') OR mapContains(SpanAttributes, 'gate.rewritten_by') OR mapContains(SpanAttributes, 'gate.input.original_sha256') OR mapContains(SpanAttributes, 'gate.rounds') OR mapContains(SpanAttributes, 'gate.verdicts'));

-- migration 5: stage
ALTER TABLE `otel`.`gate_decisions` ON CLUSTER `audit`
    ADD COLUMN IF NOT EXISTS Stage LowCardinality(String) DEFAULT 'gate' CODEC(ZSTD(1));

ALTER TABLE `otel`.`gate_decisions` ON CLUSTER `audit`
    MODIFY COLUMN VerdictGates DEFAULT arrayMap(v -> splitByChar('|', v)[1], arrayFilter(v -> splitByChar('|', v)[2] != 'more', if(notEmpty(Verdicts) OR (NOT Gated AND (Action = '' OR Stage != 'gate')), Verdicts, [concat(Source, '|', if(Approval != '', 'ask', Action), '|', RiskLevel, '|')]))),
    MODIFY COLUMN VerdictActions DEFAULT arrayMap(v -> splitByChar('|', v)[2], arrayFilter(v -> splitByChar('|', v)[2] != 'more', if(notEmpty(Verdicts) OR (NOT Gated AND (Action = '' OR Stage != 'gate')), Verdicts, [concat(Source, '|', if(Approval != '', 'ask', Action), '|', RiskLevel, '|')])));

ALTER TABLE `otel`.`gate_decisions_mv` ON CLUSTER `audit` MODIFY QUERY
SELECT
    Timestamp AS Timestamp,
    now64(9) AS InsertedAt,
    TraceId AS TraceId,
    SpanId AS SpanId,
    ParentSpanId AS ParentSpanId,
    ServiceName AS ServiceName,
    SpanAttributes['gen_ai.agent.name'] AS Agent,
    SpanAttributes['toolgate.run.id'] AS RunId,
    SpanAttributes['toolgate.task.id'] AS TaskId,
    SpanAttributes['gen_ai.tool.name'] AS ToolName,
    SpanAttributes['gen_ai.tool.call.id'] AS ToolCallId,
    SpanAttributes['gate.gated'] = 'true' AS Gated,
    SpanAttributes['gate.opt_out'] = 'true' AS OptOut,
    SpanAttributes['gate.action'] AS Action,
    SpanAttributes['gate.reason'] AS Reason,
    SpanAttributes['gate.source'] AS Source,
    SpanAttributes['gate.risk.level'] AS RiskLevel,
    SpanAttributes['gate.approval'] AS Approval,
    SpanAttributes['gate.approver'] AS Approver,
    SpanAttributes['gate.error'] AS ErrorKind,
    SpanAttributes['error.type'] AS ErrorType,
    StatusCode = 'Error' AS IsError,
    StatusMessage AS StatusMessage,
    Duration AS Duration,
    toUInt64OrZero(SpanAttributes['gate.duration_ns']) AS GateDuration,
    SpanAttributes['gen_ai.tool.call.arguments'] AS Input,
    SpanAttributes['gate.rewritten'] = 'true' AS Rewritten,
    SpanAttributes['gate.rewritten_by'] AS RewrittenBy,
    SpanAttributes['gate.input.original_sha256'] AS OriginalInputHash,
    toUInt64OrZero(SpanAttributes['gate.rounds']) AS Rounds,
    if(startsWith(SpanAttributes['gate.verdicts'], '['), JSONExtract(SpanAttributes['gate.verdicts'], 'Array(String)'), if(SpanAttributes['gate.verdicts'] = '', [], [SpanAttributes['gate.verdicts']])) AS Verdicts,
    if(SpanAttributes['gate.stage'] = '', 'gate', SpanAttributes['gate.stage']) AS Stage
FROM `otel`.`otel_traces`
WHERE (mapContains(SpanAttributes, 'gate.action') OR SpanAttributes['gate.gated'] = 'true' OR SpanAttributes['gate.opt_out'] = 'true');

INSERT INTO `otel`.`gate_decisions` (Timestamp, InsertedAt, TraceId, SpanId, ParentSpanId, ServiceName, Agent, RunId, TaskId, ToolName, ToolCallId, Gated, OptOut, Action, Reason, Source, RiskLevel, Approval, Approver, ErrorKind, ErrorType, IsError, StatusMessage, Duration, GateDuration, Input, Rewritten, RewrittenBy, OriginalInputHash, Rounds, Verdicts, Stage)
SELECT
    Timestamp AS Timestamp,
    repaired.FirstInsertedAt AS InsertedAt,
    TraceId AS TraceId,
    SpanId AS SpanId,
    ParentSpanId AS ParentSpanId,
    ServiceName AS ServiceName,
    SpanAttributes['gen_ai.agent.name'] AS Agent,
    SpanAttributes['toolgate.run.id'] AS RunId,
    SpanAttributes['toolgate.task.id'] AS TaskId,
    SpanAttributes['gen_ai.tool.name'] AS ToolName,
    SpanAttributes['gen_ai.tool.call.id'] AS ToolCallId,
    SpanAttributes['gate.gated'] = 'true' AS Gated,
    SpanAttributes['gate.opt_out'] = 'true' AS OptOut,
    SpanAttributes['gate.action'] AS Action,
    SpanAttributes['gate.reason'] AS Reason,
    SpanAttributes['gate.source'] AS Source,
    SpanAttributes['gate.risk.level'] AS RiskLevel,
    SpanAttributes['gate.approval'] AS Approval,
    SpanAttributes['gate.approver'] AS Approver,
    SpanAttributes['gate.error'] AS ErrorKind,
    SpanAttributes['error.type'] AS ErrorType,
    StatusCode = 'Error' AS IsError,
    StatusMessage AS StatusMessage,
    Duration AS Duration,
    toUInt64OrZero(SpanAttributes['gate.duration_ns']) AS GateDuration,
    SpanAttributes['gen_ai.tool.call.arguments'] AS Input,
    SpanAttributes['gate.rewritten'] = 'true' AS Rewritten,
    SpanAttributes['gate.rewritten_by'] AS RewrittenBy,
    SpanAttributes['gate.input.original_sha256'] AS OriginalInputHash,
    toUInt64OrZero(SpanAttributes['gate.rounds']) AS Rounds,
    if(startsWith(SpanAttributes['gate.verdicts'], '['), JSONExtract(SpanAttributes['gate.verdicts'], 'Array(String)'), if(SpanAttributes['gate.verdicts'] = '', [], [SpanAttributes['gate.verdicts']])) AS Verdicts,
    if(SpanAttributes['gate.stage'] = '', 'gate', SpanAttributes['gate.stage']) AS Stage
FROM `otel`.`otel_traces`
INNER JOIN (
    SELECT SpanId, min(InsertedAt) AS FirstInsertedAt
    FROM `otel`.`gate_decisions`
    WHERE SpanId IN (SELECT SpanId FROM `otel`.`otel_traces` WHERE (SpanAttributes['gate.stage'] NOT IN ('', 'gate')))
    GROUP BY SpanId
) AS repaired USING (SpanId)
WHERE (mapContains(SpanAttributes, 'gate.action') OR SpanAttributes['gate.gated'] = 'true' OR SpanAttributes['gate.opt_out'] = 'true')
  AND (SpanAttributes['gate.stage'] NOT IN ('', 'gate'));

-- migration 6: rule
ALTER TABLE `otel`.`gate_decisions` ON CLUSTER `audit`
    ADD COLUMN IF NOT EXISTS Rule LowCardinality(String) CODEC(ZSTD(1));

ALTER TABLE `otel`.`gate_decisions_mv` ON CLUSTER `audit` MODIFY QUERY
SELECT
    Timestamp AS Timestamp,
    now64(9) AS InsertedAt,
    TraceId AS TraceId,
    SpanId AS SpanId,
    ParentSpanId AS ParentSpanId,
    ServiceName AS ServiceName,
    SpanAttributes['gen_ai.agent.name'] AS Agent,
    SpanAttributes['toolgate.run.id'] AS RunId,
    SpanAttributes['toolgate.task.id'] AS TaskId,
    SpanAttributes['gen_ai.tool.name'] AS ToolName,
    SpanAttributes['gen_ai.tool.call.id'] AS ToolCallId,
    SpanAttributes['gate.gated'] = 'true' AS Gated,
    SpanAttributes['gate.opt_out'] = 'true' AS OptOut,
    SpanAttributes['gate.action'] AS Action,
    SpanAttributes['gate.reason'] AS Reason,
    SpanAttributes['gate.source'] AS Source,
    SpanAttributes['gate.risk.level'] AS RiskLevel,
    SpanAttributes['gate.approval'] AS Approval,
    SpanAttributes['gate.approver'] AS Approver,
    SpanAttributes['gate.error'] AS ErrorKind,
    SpanAttributes['error.type'] AS ErrorType,
    StatusCode = 'Error' AS IsError,
    StatusMessage AS StatusMessage,
    Duration AS Duration,
    toUInt64OrZero(SpanAttributes['gate.duration_ns']) AS GateDuration,
    SpanAttributes['gen_ai.tool.call.arguments'] AS Input,
    SpanAttributes['gate.rewritten'] = 'true' AS Rewritten,
    SpanAttributes['gate.rewritten_by'] AS RewrittenBy,
    SpanAttributes['gate.input.original_sha256'] AS OriginalInputHash,
    toUInt64OrZero(SpanAttributes['gate.rounds']) AS Rounds,
    if(startsWith(SpanAttributes['gate.verdicts'], '['), JSONExtract(SpanAttributes['gate.verdicts'], 'Array(String)'), if(SpanAttributes['gate.verdicts'] = '', [], [SpanAttributes['gate.verdicts']])) AS Verdicts,
    if(SpanAttributes['gate.stage'] = '', 'gate', SpanAttributes['gate.stage']) AS Stage,
    SpanAttributes['gate.rule'] AS Rule
FROM `otel`.`otel_traces`
WHERE (mapContains(SpanAttributes, 'gate.action') OR SpanAttributes['gate.gated'] = 'true' OR SpanAttributes['gate.opt_out'] = 'true');

INSERT INTO `otel`.`gate_decisions` (Timestamp, InsertedAt, TraceId, SpanId, ParentSpanId, ServiceName, Agent, RunId, TaskId, ToolName, ToolCallId, Gated, OptOut, Action, Reason, Source, RiskLevel, Approval, Approver, ErrorKind, ErrorType, IsError, StatusMessage, Duration, GateDuration, Input, Rewritten, RewrittenBy, OriginalInputHash, Rounds, Verdicts, Stage, Rule)
SELECT
    Timestamp AS Timestamp,
    repaired.FirstInsertedAt AS InsertedAt,
    TraceId AS TraceId,
    SpanId AS SpanId,
    ParentSpanId AS ParentSpanId,
    ServiceName AS ServiceName,
    SpanAttributes['gen_ai.agent.name'] AS Agent,
    SpanAttributes['toolgate.run.id'] AS RunId,
    SpanAttributes['toolgate.task.id'] AS TaskId,
    SpanAttributes['gen_ai.tool.name'] AS ToolName,
    SpanAttributes['gen_ai.tool.call.id'] AS ToolCallId,
    SpanAttributes['gate.gated'] = 'true' AS Gated,
    SpanAttributes['gate.opt_out'] = 'true' AS OptOut,
    SpanAttributes['gate.action'] AS Action,
    SpanAttributes['gate.reason'] AS Reason,
    SpanAttributes['gate.source'] AS Source,
    SpanAttributes['gate.risk.level'] AS RiskLevel,
    SpanAttributes['gate.approval'] AS Approval,
    SpanAttributes['gate.approver'] AS Approver,
    SpanAttributes['gate.error'] AS ErrorKind,
    SpanAttributes['error.type'] AS ErrorType,
    StatusCode = 'Error' AS IsError,
    StatusMessage AS StatusMessage,
    Duration AS Duration,
    toUInt64OrZero(SpanAttributes['gate.duration_ns']) AS GateDuration,
    SpanAttributes['gen_ai.tool.call.arguments'] AS Input,
    SpanAttributes['gate.rewritten'] = 'true' AS Rewritten,
    SpanAttributes['gate.rewritten_by'] AS RewrittenBy,
    SpanAttributes['gate.input.original_sha256'] AS OriginalInputHash,
    toUInt64OrZero(SpanAttributes['gate.rounds']) AS Rounds,
    if(startsWith(SpanAttributes['gate.verdicts'], '['), JSONExtract(SpanAttributes['gate.verdicts'], 'Array(String)'), if(SpanAttributes['gate.verdicts'] = '', [], [SpanAttributes['gate.verdicts']])) AS Verdicts,
    if(SpanAttributes['gate.stage'] = '', 'gate', SpanAttributes['gate.stage']) AS Stage,
    SpanAttributes['gate.rule'] AS Rule
FROM `otel`.`otel_traces`
INNER JOIN (
    SELECT SpanId, min(InsertedAt) AS FirstInsertedAt
    FROM `otel`.`gate_decisions`
    WHERE SpanId IN (SELECT SpanId FROM `otel`.`otel_traces` WHERE (mapContains(SpanAttributes, 'gate.rule')))
    GROUP BY SpanId
) AS repaired USING (SpanId)
WHERE (mapContains(SpanAttributes, 'gate.action') OR SpanAttributes['gate.gated'] = 'true' OR SpanAttributes['gate.opt_out'] = 'true')
  AND (mapContains(SpanAttributes, 'gate.rule'));

-- migration 7: calls
ALTER TABLE `otel`.`gate_decisions` ON CLUSTER `audit`
    ADD COLUMN IF NOT EXISTS Calls UInt64 DEFAULT 1 CODEC(ZSTD(1));

ALTER TABLE `otel`.`gate_decisions_mv` ON CLUSTER `audit` MODIFY QUERY
SELECT
    Timestamp AS Timestamp,
    now64(9) AS InsertedAt,
    TraceId AS TraceId,
    SpanId AS SpanId,
    ParentSpanId AS ParentSpanId,
    ServiceName AS ServiceName,
    SpanAttributes['gen_ai.agent.name'] AS Agent,
    SpanAttributes['toolgate.run.id'] AS RunId,
    SpanAttributes['toolgate.task.id'] AS TaskId,
    SpanAttributes['gen_ai.tool.name'] AS ToolName,
    SpanAttributes['gen_ai.tool.call.id'] AS ToolCallId,
    SpanAttributes['gate.gated'] = 'true' AS Gated,
    SpanAttributes['gate.opt_out'] = 'true' AS OptOut,
    SpanAttributes['gate.action'] AS Action,
    SpanAttributes['gate.reason'] AS Reason,
    SpanAttributes['gate.source'] AS Source,
    SpanAttributes['gate.risk.level'] AS RiskLevel,
    SpanAttributes['gate.approval'] AS Approval,
    SpanAttributes['gate.approver'] AS Approver,
    SpanAttributes['gate.error'] AS ErrorKind,
    SpanAttributes['error.type'] AS ErrorType,
    StatusCode = 'Error' AS IsError,
    StatusMessage AS StatusMessage,
    Duration AS Duration,
    toUInt64OrZero(SpanAttributes['gate.duration_ns']) AS GateDuration,
    SpanAttributes['gen_ai.tool.call.arguments'] AS Input,
    SpanAttributes['gate.rewritten'] = 'true' AS Rewritten,
    SpanAttributes['gate.rewritten_by'] AS RewrittenBy,
    SpanAttributes['gate.input.original_sha256'] AS OriginalInputHash,
    toUInt64OrZero(SpanAttributes['gate.rounds']) AS Rounds,
    if(startsWith(SpanAttributes['gate.verdicts'], '['), JSONExtract(SpanAttributes['gate.verdicts'], 'Array(String)'), if(SpanAttributes['gate.verdicts'] = '', [], [SpanAttributes['gate.verdicts']])) AS Verdicts,
    if(SpanAttributes['gate.stage'] = '', 'gate', SpanAttributes['gate.stage']) AS Stage,
    SpanAttributes['gate.rule'] AS Rule,
    if(toUInt64OrZero(SpanAttributes['gate.calls']) = 0, toUInt64(1), toUInt64OrZero(SpanAttributes['gate.calls'])) AS Calls
FROM `otel`.`otel_traces`
WHERE (mapContains(SpanAttributes, 'gate.action') OR SpanAttributes['gate.gated'] = 'true' OR SpanAttributes['gate.opt_out'] = 'true');

INSERT INTO `otel`.`gate_decisions` (Timestamp, InsertedAt, TraceId, SpanId, ParentSpanId, ServiceName, Agent, RunId, TaskId, ToolName, ToolCallId, Gated, OptOut, Action, Reason, Source, RiskLevel, Approval, Approver, ErrorKind, ErrorType, IsError, StatusMessage, Duration, GateDuration, Input, Rewritten, RewrittenBy, OriginalInputHash, Rounds, Verdicts, Stage, Rule, Calls)
SELECT
    Timestamp AS Timestamp,
    repaired.FirstInsertedAt AS InsertedAt,
    TraceId AS TraceId,
    SpanId AS SpanId,
    ParentSpanId AS ParentSpanId,
    ServiceName AS ServiceName,
    SpanAttributes['gen_ai.agent.name'] AS Agent,
    SpanAttributes['toolgate.run.id'] AS RunId,
    SpanAttributes['toolgate.task.id'] AS TaskId,
    SpanAttributes['gen_ai.tool.name'] AS ToolName,
    SpanAttributes['gen_ai.tool.call.id'] AS ToolCallId,
    SpanAttributes['gate.gated'] = 'true' AS Gated,
    SpanAttributes['gate.opt_out'] = 'true' AS OptOut,
    SpanAttributes['gate.action'] AS Action,
    SpanAttributes['gate.reason'] AS Reason,
    SpanAttributes['gate.source'] AS Source,
    SpanAttributes['gate.risk.level'] AS RiskLevel,
    SpanAttributes['gate.approval'] AS Approval,
    SpanAttributes['gate.approver'] AS Approver,
    SpanAttributes['gate.error'] AS ErrorKind,
    SpanAttributes['error.type'] AS ErrorType,
    StatusCode = 'Error' AS IsError,
    StatusMessage AS StatusMessage,
    Duration AS Duration,
    toUInt64OrZero(SpanAttributes['gate.duration_ns']) AS GateDuration,
    SpanAttributes['gen_ai.tool.call.arguments'] AS Input,
    SpanAttributes['gate.rewritten'] = 'true' AS Rewritten,
    SpanAttributes['gate.rewritten_by'] AS RewrittenBy,
    SpanAttributes['gate.input.original_sha256'] AS OriginalInputHash,
    toUInt64OrZero(SpanAttributes['gate.rounds']) AS Rounds,
    if(startsWith(SpanAttributes['gate.verdicts'], '['), JSONExtract(SpanAttributes['gate.verdicts'], 'Array(String)'), if(SpanAttributes['gate.verdicts'] = '', [], [SpanAttributes['gate.verdicts']])) AS Verdicts,
    if(SpanAttributes['gate.stage'] = '', 'gate', SpanAttributes['gate.stage']) AS Stage,
    SpanAttributes['gate.rule'] AS Rule,
    if(toUInt64OrZero(SpanAttributes['gate.calls']) = 0, toUInt64(1), toUInt64OrZero(SpanAttributes['gate.calls'])) AS Calls
FROM `otel`.`otel_traces`
INNER JOIN (
    SELECT SpanId, min(InsertedAt) AS FirstInsertedAt
    FROM `otel`.`gate_decisions`
    WHERE SpanId IN (SELECT SpanId FROM `otel`.`otel_traces` WHERE (SpanAttributes['gate.calls'] NOT IN ('', '1')))
    GROUP BY SpanId
) AS repaired USING (SpanId)
WHERE (mapContains(SpanAttributes, 'gate.action') OR SpanAttributes['gate.gated'] = 'true' OR SpanAttributes['gate.opt_out'] = 'true')
  AND (SpanAttributes['gate.calls'] NOT IN ('', '1'));

-- migration 8: chain
ALTER TABLE `otel`.`gate_decisions` ON CLUSTER `audit`
    ADD COLUMN IF NOT EXISTS ChainId String CODEC(ZSTD(1)),
    ADD COLUMN IF NOT EXISTS ChainSeq UInt64 CODEC(ZSTD(1)),
    ADD COLUMN IF NOT EXISTS ChainPrev String CODEC(ZSTD(1)),
    ADD COLUMN IF NOT EXISTS ChainHash String CODEC(ZSTD(1));

ALTER TABLE `otel`.`gate_decisions_mv` ON CLUSTER `audit` MODIFY QUERY
SELECT
    Timestamp AS Timestamp,
    now64(9) AS InsertedAt,
    TraceId AS TraceId,
    SpanId AS SpanId,
    ParentSpanId AS ParentSpanId,
    ServiceName AS ServiceName,
    SpanAttributes['gen_ai.agent.name'] AS Agent,
    SpanAttributes['toolgate.run.id'] AS RunId,
    SpanAttributes['toolgate.task.id'] AS TaskId,
    SpanAttributes['gen_ai.tool.name'] AS ToolName,
    SpanAttributes['gen_ai.tool.call.id'] AS ToolCallId,
    SpanAttributes['gate.gated'] = 'true' AS Gated,
    SpanAttributes['gate.opt_out'] = 'true' AS OptOut,
    SpanAttributes['gate.action'] AS Action,
    SpanAttributes['gate.reason'] AS Reason,
    SpanAttributes['gate.source'] AS Source,
    SpanAttributes['gate.risk.level'] AS RiskLevel,
    SpanAttributes['gate.approval'] AS Approval,
    SpanAttributes['gate.approver'] AS Approver,
    SpanAttributes['gate.error'] AS ErrorKind,
    SpanAttributes['error.type'] AS ErrorType,
    StatusCode = 'Error' AS IsError,
    StatusMessage AS StatusMessage,
    Duration AS Duration,
    toUInt64OrZero(SpanAttributes['gate.duration_ns']) AS GateDuration,
    SpanAttributes['gen_ai.tool.call.arguments'] AS Input,
    SpanAttributes['gate.rewritten'] = 'true' AS Rewritten,
    SpanAttributes['gate.rewritten_by'] AS RewrittenBy,
    SpanAttributes['gate.input.original_sha256'] AS OriginalInputHash,
    toUInt64OrZero(SpanAttributes['gate.rounds']) AS Rounds,
    if(startsWith(SpanAttributes['gate.verdicts'], '['), JSONExtract(SpanAttributes['gate.verdicts'], 'Array(String)'), if(SpanAttributes['gate.verdicts'] = '', [], [SpanAttributes['gate.verdicts']])) AS Verdicts,
    if(SpanAttributes['gate.stage'] = '', 'gate', SpanAttributes['gate.stage']) AS Stage,
    SpanAttributes['gate.rule'] AS Rule,
    if(toUInt64OrZero(SpanAttributes['gate.calls']) = 0, toUInt64(1), toUInt64OrZero(SpanAttributes['gate.calls'])) AS Calls,
    SpanAttributes['gate.chain.id'] AS ChainId,
    toUInt64OrZero(SpanAttributes['gate.chain.seq']) AS ChainSeq,
    SpanAttributes['gate.chain.prev'] AS ChainPrev,
    SpanAttributes['gate.chain.hash'] AS ChainHash
FROM `otel`.`otel_traces`
WHERE (mapContains(SpanAttributes, 'gate.action') OR SpanAttributes['gate.gated'] = 'true' OR SpanAttributes['gate.opt_out'] = 'true');

INSERT INTO `otel`.`gate_decisions` (Timestamp, InsertedAt, TraceId, SpanId, ParentSpanId, ServiceName, Agent, RunId, TaskId, ToolName, ToolCallId, Gated, OptOut, Action, Reason, Source, RiskLevel, Approval, Approver, ErrorKind, ErrorType, IsError, StatusMessage, Duration, GateDuration, Input, Rewritten, RewrittenBy, OriginalInputHash, Rounds, Verdicts, Stage, Rule, Calls, ChainId, ChainSeq, ChainPrev, ChainHash)
SELECT
    Timestamp AS Timestamp,
    repaired.FirstInsertedAt AS InsertedAt,
    TraceId AS TraceId,
    SpanId AS SpanId,
    ParentSpanId AS ParentSpanId,
    ServiceName AS ServiceName,
    SpanAttributes['gen_ai.agent.name'] AS Agent,
    SpanAttributes['toolgate.run.id'] AS RunId,
    SpanAttributes['toolgate.task.id'] AS TaskId,
    SpanAttributes['gen_ai.tool.name'] AS ToolName,
    SpanAttributes['gen_ai.tool.call.id'] AS ToolCallId,
    SpanAttributes['gate.gated'] = 'true' AS Gated,
    SpanAttributes['gate.opt_out'] = 'true' AS OptOut,
    SpanAttributes['gate.action'] AS Action,
    SpanAttributes['gate.reason'] AS Reason,
    SpanAttributes['gate.source'] AS Source,
    SpanAttributes['gate.risk.level'] AS RiskLevel,
    SpanAttributes['gate.approval'] AS Approval,
    SpanAttributes['gate.approver'] AS Approver,
    SpanAttributes['gate.error'] AS ErrorKind,
    SpanAttributes['error.type'] AS ErrorType,
    StatusCode = 'Error' AS IsError,
    StatusMessage AS StatusMessage,
    Duration AS Duration,
    toUInt64OrZero(SpanAttributes['gate.duration_ns']) AS GateDuration,
    SpanAttributes['gen_ai.tool.call.arguments'] AS Input,
    SpanAttributes['gate.rewritten'] = 'true' AS Rewritten,
    SpanAttributes['gate.rewritten_by'] AS RewrittenBy,
    SpanAttributes['gate.input.original_sha256'] AS OriginalInputHash,
    toUInt64OrZero(SpanAttributes['gate.rounds']) AS Rounds,
    if(startsWith(SpanAttributes['gate.verdicts'], '['), JSONExtract(SpanAttributes['gate.verdicts'], 'Array(String)'), if(SpanAttributes['gate.verdicts'] = '', [], [SpanAttributes['gate.verdicts']])) AS Verdicts,
    if(SpanAttributes['gate.stage'] = '', 'gate', SpanAttributes['gate.stage']) AS Stage,
    SpanAttributes['gate.rule'] AS Rule,
    if(toUInt64OrZero(SpanAttributes['gate.calls']) = 0, toUInt64(1), toUInt64OrZero(SpanAttributes['gate.calls'])) AS Calls,
    SpanAttributes['gate.chain.id'] AS ChainId,
    toUInt64OrZero(SpanAttributes['gate.chain.seq']) AS ChainSeq,
    SpanAttributes['gate.chain.prev'] AS ChainPrev,
    SpanAttributes['gate.chain.hash'] AS ChainHash
FROM `otel`.`otel_traces`
INNER JOIN (
    SELECT SpanId, min(InsertedAt) AS FirstInsertedAt
    FROM `otel`.`gate_decisions`
    WHERE SpanId IN (SELECT SpanId FROM `otel`.`otel_traces` WHERE (mapContains(SpanAttributes, 'gate.chain.id') OR mapContains(SpanAttributes, 'gate.chain.seq') OR mapContains(SpanAttributes, 'gate.chain.prev') OR mapContains(SpanAttributes, 'gate.chain.hash')))
    GROUP BY SpanId
) AS repaired USING (SpanId)
WHERE (mapContains(SpanAttributes, 'gate.action') OR SpanAttributes['gate.gated'] = 'true' OR SpanAttributes['gate.opt_out'] = 'true')
  AND (mapContains(SpanAttributes, 'gate.chain.id') OR mapContains(SpanAttributes, 'gate.chain.seq') OR mapContains(SpanAttributes, 'gate.chain.prev') OR mapContains(SpanAttributes, 'gate.chain.hash'));

ALTER TABLE `otel`.`gate_decisions` ON CLUSTER `audit`
    ADD INDEX IF NOT EXISTS idx_chain_id ChainId TYPE bloom_filter(0.001) GRANULARITY 1,
    ADD INDEX IF NOT EXISTS idx_run_id RunId TYPE bloom_filter(0.01) GRANULARITY 1;

-- migration 9: approvals
ALTER TABLE `otel`.`gate_decisions` ON CLUSTER `audit`
    ADD COLUMN IF NOT EXISTS ApprovalId String CODEC(ZSTD(1)),
    ADD COLUMN IF NOT EXISTS ApprovalWaitMs UInt64 CODEC(ZSTD(1));

ALTER TABLE `otel`.`gate_decisions_mv` ON CLUSTER `audit` MODIFY QUERY
SELECT
    Timestamp AS Timestamp,
    now64(9) AS InsertedAt,
    TraceId AS TraceId,
    SpanId AS SpanId,
    ParentSpanId AS ParentSpanId,
    ServiceName AS ServiceName,
    SpanAttributes['gen_ai.agent.name'] AS Agent,
    SpanAttributes['toolgate.run.id'] AS RunId,
    SpanAttributes['toolgate.task.id'] AS TaskId,
    SpanAttributes['gen_ai.tool.name'] AS ToolName,
    SpanAttributes['gen_ai.tool.call.id'] AS ToolCallId,
    SpanAttributes['gate.gated'] = 'true' AS Gated,
    SpanAttributes['gate.opt_out'] = 'true' AS OptOut,
    SpanAttributes['gate.action'] AS Action,
    SpanAttributes['gate.reason'] AS Reason,
    SpanAttributes['gate.source'] AS Source,
    SpanAttributes['gate.risk.level'] AS RiskLevel,
    SpanAttributes['gate.approval'] AS Approval,
    SpanAttributes['gate.approver'] AS Approver,
    SpanAttributes['gate.error'] AS ErrorKind,
    SpanAttributes['error.type'] AS ErrorType,
    StatusCode = 'Error' AS IsError,
    StatusMessage AS StatusMessage,
    Duration AS Duration,
    toUInt64OrZero(SpanAttributes['gate.duration_ns']) AS GateDuration,
    SpanAttributes['gen_ai.tool.call.arguments'] AS Input,
    SpanAttributes['gate.rewritten'] = 'true' AS Rewritten,
    SpanAttributes['gate.rewritten_by'] AS RewrittenBy,
    SpanAttributes['gate.input.original_sha256'] AS OriginalInputHash,
    toUInt64OrZero(SpanAttributes['gate.rounds']) AS Rounds,
    if(startsWith(SpanAttributes['gate.verdicts'], '['), JSONExtract(SpanAttributes['gate.verdicts'], 'Array(String)'), if(SpanAttributes['gate.verdicts'] = '', [], [SpanAttributes['gate.verdicts']])) AS Verdicts,
    if(SpanAttributes['gate.stage'] = '', 'gate', SpanAttributes['gate.stage']) AS Stage,
    SpanAttributes['gate.rule'] AS Rule,
    if(toUInt64OrZero(SpanAttributes['gate.calls']) = 0, toUInt64(1), toUInt64OrZero(SpanAttributes['gate.calls'])) AS Calls,
    SpanAttributes['gate.chain.id'] AS ChainId,
    toUInt64OrZero(SpanAttributes['gate.chain.seq']) AS ChainSeq,
    SpanAttributes['gate.chain.prev'] AS ChainPrev,
    SpanAttributes['gate.chain.hash'] AS ChainHash,
    SpanAttributes['gate.approval.id'] AS ApprovalId,
    toUInt64OrZero(SpanAttributes['gate.approval.wait_ms']) AS ApprovalWaitMs
FROM `otel`.`otel_traces`
WHERE (mapContains(SpanAttributes, 'gate.action') OR SpanAttributes['gate.gated'] = 'true' OR SpanAttributes['gate.opt_out'] = 'true');

INSERT INTO `otel`.`gate_decisions` (Timestamp, InsertedAt, TraceId, SpanId, ParentSpanId, ServiceName, Agent, RunId, TaskId, ToolName, ToolCallId, Gated, OptOut, Action, Reason, Source, RiskLevel, Approval, Approver, ErrorKind, ErrorType, IsError, StatusMessage, Duration, GateDuration, Input, Rewritten, RewrittenBy, OriginalInputHash, Rounds, Verdicts, Stage, Rule, Calls, ChainId, ChainSeq, ChainPrev, ChainHash, ApprovalId, ApprovalWaitMs)
SELECT
    Timestamp AS Timestamp,
    repaired.FirstInsertedAt AS InsertedAt,
    TraceId AS TraceId,
    SpanId AS SpanId,
    ParentSpanId AS ParentSpanId,
    ServiceName AS ServiceName,
    SpanAttributes['gen_ai.agent.name'] AS Agent,
    SpanAttributes['toolgate.run.id'] AS RunId,
    SpanAttributes['toolgate.task.id'] AS TaskId,
    SpanAttributes['gen_ai.tool.name'] AS ToolName,
    SpanAttributes['gen_ai.tool.call.id'] AS ToolCallId,
    SpanAttributes['gate.gated'] = 'true' AS Gated,
    SpanAttributes['gate.opt_out'] = 'true' AS OptOut,
    SpanAttributes['gate.action'] AS Action,
    SpanAttributes['gate.reason'] AS Reason,
    SpanAttributes['gate.source'] AS Source,
    SpanAttributes['gate.risk.level'] AS RiskLevel,
    SpanAttributes['gate.approval'] AS Approval,
    SpanAttributes['gate.approver'] AS Approver,
    SpanAttributes['gate.error'] AS ErrorKind,
    SpanAttributes['error.type'] AS ErrorType,
    StatusCode = 'Error' AS IsError,
    StatusMessage AS StatusMessage,
    Duration AS Duration,
    toUInt64OrZero(SpanAttributes['gate.duration_ns']) AS GateDuration,
    SpanAttributes['gen_ai.tool.call.arguments'] AS Input,
    SpanAttributes['gate.rewritten'] = 'true' AS Rewritten,
    SpanAttributes['gate.rewritten_by'] AS RewrittenBy,
    SpanAttributes['gate.input.original_sha256'] AS OriginalInputHash,
    toUInt64OrZero(SpanAttributes['gate.rounds']) AS Rounds,
    if(startsWith(SpanAttributes['gate.verdicts'], '['), JSONExtract(SpanAttributes['gate.verdicts'], 'Array(String)'), if(SpanAttributes['gate.verdicts'] = '', [], [SpanAttributes['gate.verdicts']])) AS Verdicts,
    if(SpanAttributes['gate.stage'] = '', 'gate', SpanAttributes['gate.stage']) AS Stage,
    SpanAttributes['gate.rule'] AS Rule,
    if(toUInt64OrZero(SpanAttributes['gate.calls']) = 0, toUInt64(1), toUInt64OrZero(SpanAttributes['gate.calls'])) AS Calls,
    SpanAttributes['gate.chain.id'] AS ChainId,
    toUInt64OrZero(SpanAttributes['gate.chain.seq']) AS ChainSeq,
    SpanAttributes['gate.chain.prev'] AS ChainPrev,
    SpanAttributes['gate.chain.hash'] AS ChainHash,
    SpanAttributes['gate.approval.id'] AS ApprovalId,
    toUInt64OrZero(SpanAttributes['gate.approval.wait_ms']) AS ApprovalWaitMs
FROM `otel`.`otel_traces`
INNER JOIN (
    SELECT SpanId, min(InsertedAt) AS FirstInsertedAt
    FROM `otel`.`gate_decisions`
    WHERE SpanId IN (SELECT SpanId FROM `otel`.`otel_traces` WHERE (mapContains(SpanAttributes, 'gate.approval.id') OR mapContains(SpanAttributes, 'gate.approval.wait_ms')))
    GROUP BY SpanId
) AS repaired USING (SpanId)
WHERE (mapContains(SpanAttributes, 'gate.action') OR SpanAttributes['gate.gated'] = 'true' OR SpanAttributes['gate.opt_out'] = 'true')
  AND (mapContains(SpanAttributes, 'gate.approval.id') OR mapContains(SpanAttributes, 'gate.approval.wait_ms'));

ALTER TABLE `otel`.`gate_decisions` ON CLUSTER `audit`
    ADD INDEX IF NOT EXISTS idx_approval_id ApprovalId TYPE bloom_filter(0.01) GRANULARITY 1;

-- migration 10: hourly_rollup
CREATE TABLE IF NOT EXISTS `otel`.`gate_decisions_hourly` ON CLUSTER `audit` (
    Hour DateTime('UTC'),
    Action LowCardinality(String),
    Agent LowCardinality(String),
    ToolName LowCardinality(String),
    Rule LowCardinality(String),
    RiskLevel LowCardinality(String),
    Source LowCardinality(String),
    Stage LowCardinality(String),
    Approval LowCardinality(String),
    Approver String,
    ServiceName LowCardinality(String),
    Calls UInt64,
    Denied UInt64,
    Waited UInt64,
    WaitSumMs UInt64,
    WaitMaxMs UInt64,
    RolledThrough DateTime64(9)
) ENGINE = ReplicatedReplacingMergeTree('/clickhouse/tables/{shard}/{database}/{table}', '{replica}', RolledThrough)
PARTITION BY toYYYYMM(Hour)
ORDER BY (Hour, Action, Agent, ToolName, Rule, RiskLevel, Source, Stage, Approval, Approver, ServiceName)
TTL toDateTime(Hour) + toIntervalDay(365);

INSERT INTO `otel`.`gate_decisions_hourly`
SELECT Hour, kAction AS Action, kAgent AS Agent, kToolName AS ToolName, kRule AS Rule, kRiskLevel AS RiskLevel, kSource AS Source, kStage AS Stage, kApproval AS Approval, kApprover AS Approver, kServiceName AS ServiceName,
    sum(cCalls) AS Calls, sumIf(cCalls, kAction = 'deny') AS Denied, countIf(cWait > 0) AS Waited,
    sum(cWait) AS WaitSumMs, max(cWait) AS WaitMaxMs,
    now64(9) - toIntervalMillisecond(300000) AS RolledThrough
FROM (
    SELECT toStartOfHour(toDateTime(Timestamp, 'UTC')) AS Hour, Action AS kAction, Agent AS kAgent, ToolName AS kToolName, if(Rule != '', Rule, extract(Reason, '\\[([a-z0-9][a-z0-9_.-]*)\\]')) AS kRule, RiskLevel AS kRiskLevel, Source AS kSource, Stage AS kStage, Approval AS kApproval, Approver AS kApprover, ServiceName AS kServiceName, Calls AS cCalls, ApprovalWaitMs AS cWait
    FROM `otel`.`gate_decisions` FINAL
    WHERE toStartOfHour(toDateTime(Timestamp, 'UTC')) IN (
        SELECT DISTINCT toStartOfHour(toDateTime(Timestamp, 'UTC')) FROM `otel`.`gate_decisions`
        WHERE InsertedAt > (SELECT max(RolledThrough) FROM `otel`.`gate_decisions_hourly`))
)
GROUP BY Hour, kAction, kAgent, kToolName, kRule, kRiskLevel, kSource, kStage, kApproval, kApprover, kServiceName
SETTINGS do_not_merge_across_partitions_select_final = 1;

CREATE MATERIALIZED VIEW IF NOT EXISTS `otel`.`gate_decisions_hourly_mv` ON CLUSTER `audit`
REFRESH EVERY 1 MINUTE APPEND TO `otel`.`gate_decisions_hourly` AS
SELECT Hour, kAction AS Action, kAgent AS Agent, kToolName AS ToolName, kRule AS Rule, kRiskLevel AS RiskLevel, kSource AS Source, kStage AS Stage, kApproval AS Approval, kApprover AS Approver, kServiceName AS ServiceName,
    sum(cCalls) AS Calls, sumIf(cCalls, kAction = 'deny') AS Denied, countIf(cWait > 0) AS Waited,
    sum(cWait) AS WaitSumMs, max(cWait) AS WaitMaxMs,
    now64(9) - toIntervalMillisecond(300000) AS RolledThrough
FROM (
    SELECT toStartOfHour(toDateTime(Timestamp, 'UTC')) AS Hour, Action AS kAction, Agent AS kAgent, ToolName AS kToolName, if(Rule != '', Rule, extract(Reason, '\\[([a-z0-9][a-z0-9_.-]*)\\]')) AS kRule, RiskLevel AS kRiskLevel, Source AS kSource, Stage AS kStage, Approval AS kApproval, Approver AS kApprover, ServiceName AS kServiceName, Calls AS cCalls, ApprovalWaitMs AS cWait
    FROM `otel`.`gate_decisions` FINAL
    WHERE toStartOfHour(toDateTime(Timestamp, 'UTC')) IN (
        SELECT DISTINCT toStartOfHour(toDateTime(Timestamp, 'UTC')) FROM `otel`.`gate_decisions`
        WHERE InsertedAt > (SELECT max(RolledThrough) FROM `otel`.`gate_decisions_hourly`))
)
GROUP BY Hour, kAction, kAgent, kToolName, kRule, kRiskLevel, kSource, kStage, kApproval, kApprover, kServiceName
SETTINGS do_not_merge_across_partitions_select_final = 1;

CREATE TABLE IF NOT EXISTS `otel`.`otel_traces_all` ON CLUSTER `audit` AS `otel`.`otel_traces`
ENGINE = Distributed(`audit`, `otel`, `otel_traces`, cityHash64(TraceId));

CREATE TABLE IF NOT EXISTS `otel`.`gate_decisions_all` ON CLUSTER `audit` AS `otel`.`gate_decisions`
ENGINE = Distributed(`audit`, `otel`, `gate_decisions`, cityHash64(TraceId));

CREATE TABLE IF NOT EXISTS `otel`.`gate_decisions_hourly_all` ON CLUSTER `audit` AS `otel`.`gate_decisions_hourly`
ENGINE = Distributed(`audit`, `otel`, `gate_decisions_hourly`);

-- migration 11: daily_rollups
CREATE TABLE IF NOT EXISTS `otel`.`gate_decisions_daily_rule` ON CLUSTER `audit` (
    Day DateTime('UTC'),
    Action LowCardinality(String),
    Agent LowCardinality(String),
    Rule LowCardinality(String),
    Calls UInt64,
    Denied UInt64,
    Waited UInt64,
    WaitSumMs UInt64,
    WaitMaxMs UInt64,
    RolledThrough DateTime64(9)
) ENGINE = ReplicatedMergeTree('/clickhouse/tables/{shard}/{database}/{table}', '{replica}')
ORDER BY (Day, Action, Agent, Rule)
TTL toDateTime(Day) + toIntervalDay(365);

INSERT INTO `otel`.`gate_decisions_daily_rule`
SELECT toStartOfDay(Hour, 'UTC') AS Day, Action, Agent, Rule,
    sum(Calls) AS Calls, sum(Denied) AS Denied, sum(Waited) AS Waited, sum(WaitSumMs) AS WaitSumMs, max(WaitMaxMs) AS WaitMaxMs,
    max(max(RolledThrough)) OVER () AS RolledThrough
FROM `otel`.`gate_decisions_hourly` FINAL
GROUP BY Day, Action, Agent, Rule
SETTINGS do_not_merge_across_partitions_select_final = 1;

CREATE MATERIALIZED VIEW IF NOT EXISTS `otel`.`gate_decisions_daily_rule_mv` ON CLUSTER `audit`
REFRESH EVERY 1 MINUTE TO `otel`.`gate_decisions_daily_rule` AS
SELECT toStartOfDay(Hour, 'UTC') AS Day, Action, Agent, Rule,
    sum(Calls) AS Calls, sum(Denied) AS Denied, sum(Waited) AS Waited, sum(WaitSumMs) AS WaitSumMs, max(WaitMaxMs) AS WaitMaxMs,
    max(max(RolledThrough)) OVER () AS RolledThrough
FROM `otel`.`gate_decisions_hourly` FINAL
GROUP BY Day, Action, Agent, Rule
SETTINGS do_not_merge_across_partitions_select_final = 1;

CREATE TABLE IF NOT EXISTS `otel`.`gate_decisions_daily_rule_all` ON CLUSTER `audit` AS `otel`.`gate_decisions_daily_rule`
ENGINE = Distributed(`audit`, `otel`, `gate_decisions_daily_rule`);

CREATE TABLE IF NOT EXISTS `otel`.`gate_decisions_daily_tool` ON CLUSTER `audit` (
    Day DateTime('UTC'),
    Action LowCardinality(String),
    Agent LowCardinality(String),
    ToolName LowCardinality(String),
    Calls UInt64,
    Denied UInt64,
    Waited UInt64,
    WaitSumMs UInt64,
    WaitMaxMs UInt64,
    RolledThrough DateTime64(9)
) ENGINE = ReplicatedMergeTree('/clickhouse/tables/{shard}/{database}/{table}', '{replica}')
ORDER BY (Day, Action, Agent, ToolName)
TTL toDateTime(Day) + toIntervalDay(365);

INSERT INTO `otel`.`gate_decisions_daily_tool`
SELECT toStartOfDay(Hour, 'UTC') AS Day, Action, Agent, ToolName,
    sum(Calls) AS Calls, sum(Denied) AS Denied, sum(Waited) AS Waited, sum(WaitSumMs) AS WaitSumMs, max(WaitMaxMs) AS WaitMaxMs,
    max(max(RolledThrough)) OVER () AS RolledThrough
FROM `otel`.`gate_decisions_hourly` FINAL
GROUP BY Day, Action, Agent, ToolName
SETTINGS do_not_merge_across_partitions_select_final = 1;

CREATE MATERIALIZED VIEW IF NOT EXISTS `otel`.`gate_decisions_daily_tool_mv` ON CLUSTER `audit`
REFRESH EVERY 1 MINUTE TO `otel`.`gate_decisions_daily_tool` AS
SELECT toStartOfDay(Hour, 'UTC') AS Day, Action, Agent, ToolName,
    sum(Calls) AS Calls, sum(Denied) AS Denied, sum(Waited) AS Waited, sum(WaitSumMs) AS WaitSumMs, max(WaitMaxMs) AS WaitMaxMs,
    max(max(RolledThrough)) OVER () AS RolledThrough
FROM `otel`.`gate_decisions_hourly` FINAL
GROUP BY Day, Action, Agent, ToolName
SETTINGS do_not_merge_across_partitions_select_final = 1;

CREATE TABLE IF NOT EXISTS `otel`.`gate_decisions_daily_tool_all` ON CLUSTER `audit` AS `otel`.`gate_decisions_daily_tool`
ENGINE = Distributed(`audit`, `otel`, `gate_decisions_daily_tool`);

-- migration 12: arrivals
CREATE TABLE IF NOT EXISTS `otel`.`gate_decisions_arrivals` ON CLUSTER `audit` (
    Hour DateTime('UTC'),
    LastInsertedAt DateTime64(9)
) ENGINE = ReplicatedReplacingMergeTree('/clickhouse/tables/{shard}/{database}/{table}', '{replica}', LastInsertedAt)
ORDER BY Hour
TTL toDateTime(Hour + toIntervalDay(1)) + toIntervalDay(365);

CREATE MATERIALIZED VIEW IF NOT EXISTS `otel`.`gate_decisions_arrivals_mv` ON CLUSTER `audit` TO `otel`.`gate_decisions_arrivals` AS
SELECT toStartOfHour(toDateTime(Timestamp, 'UTC')) AS Hour, max(InsertedAt) AS LastInsertedAt
FROM `otel`.`gate_decisions`
GROUP BY Hour;

INSERT INTO `otel`.`gate_decisions_arrivals`
SELECT toStartOfHour(toDateTime(Timestamp, 'UTC')) AS Hour, max(InsertedAt) AS LastInsertedAt
FROM `otel`.`gate_decisions`
GROUP BY Hour;

CREATE TABLE IF NOT EXISTS `otel`.`gate_decisions_arrivals_all` ON CLUSTER `audit` AS `otel`.`gate_decisions_arrivals`
ENGINE = Distributed(`audit`, `otel`, `gate_decisions_arrivals`);

