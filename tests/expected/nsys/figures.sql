-- Independent expected figures for the Nsight Systems importer (tests/tests/nsys_import.rs).
-- Each query is named by the `-- name:` line above it; nsys_expected.py runs each one on a
-- sample and writes all result rows (lists) under that name. A query over a table the
-- sample lacks gives null. pid = (globalTid >> 24) & 0xFFFFFF, tid = globalTid & 0xFFFFFF
-- (nsys's documented encoding); correlation ids are unique per process only.

-- name: kernels
SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL;
-- name: kernels_by_device
SELECT deviceId, count(*), sum("end" - start) FROM CUPTI_ACTIVITY_KIND_KERNEL GROUP BY deviceId ORDER BY deviceId;
-- name: top_kernels
SELECT s.value, count(*), sum(k."end" - k.start)
  FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN StringIds s ON s.id = coalesce(k.demangledName, k.shortName)
  GROUP BY s.value ORDER BY 3 DESC, 1 LIMIT 5;
-- name: memcpy
SELECT count(*) FROM CUPTI_ACTIVITY_KIND_MEMCPY;
-- name: memcpy_by_kind
SELECT copyKind, srcKind, dstKind, count(*), sum(bytes) FROM CUPTI_ACTIVITY_KIND_MEMCPY GROUP BY 1, 2, 3 ORDER BY 1, 2, 3;
-- name: memset
SELECT count(*) FROM CUPTI_ACTIVITY_KIND_MEMSET;
-- name: runtime
SELECT count(*) FROM CUPTI_ACTIVITY_KIND_RUNTIME;
-- name: runtime_dur
SELECT sum("end" - start) FROM CUPTI_ACTIVITY_KIND_RUNTIME;
-- name: sync
SELECT count(*) FROM CUPTI_ACTIVITY_KIND_SYNCHRONIZATION;
-- name: sync_with_thread
SELECT count(*) FROM CUPTI_ACTIVITY_KIND_SYNCHRONIZATION s WHERE EXISTS (
  SELECT 1 FROM CUPTI_ACTIVITY_KIND_RUNTIME r
   WHERE r.correlationId = s.correlationId AND ((r.globalTid >> 24) & 16777215) = ((s.globalPid >> 24) & 16777215));
-- name: osrt
SELECT count(*) FROM OSRT_API;
-- name: nvtx_ranges
SELECT count(*) FROM NVTX_EVENTS WHERE eventType IN (59, 60);
-- name: nvtx_unclosed
SELECT count(*) FROM NVTX_EVENTS WHERE eventType IN (59, 60) AND "end" IS NULL;
-- name: nvtx_marks
SELECT count(*) FROM NVTX_EVENTS WHERE eventType = 34;
-- name: nvtx_rows
SELECT count(*) FROM NVTX_EVENTS;
-- name: nvtx_top
SELECT coalesce(n.text, s.value), count(*) FROM NVTX_EVENTS n LEFT JOIN StringIds s ON s.id = n.textId
  WHERE n.eventType IN (59, 60) GROUP BY 1 ORDER BY 2 DESC, 1 LIMIT 5;
-- name: nvtx_threads
SELECT count(*) FROM (SELECT DISTINCT globalTid FROM NVTX_EVENTS WHERE eventType IN (34, 59, 60));
-- name: flows_kernel
SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL g WHERE g.correlationId <> 0 AND EXISTS (
  SELECT 1 FROM CUPTI_ACTIVITY_KIND_RUNTIME r
   WHERE r.correlationId = g.correlationId AND ((r.globalTid >> 24) & 16777215) = ((g.globalPid >> 24) & 16777215));
-- name: flows_memcpy
SELECT count(*) FROM CUPTI_ACTIVITY_KIND_MEMCPY g WHERE g.correlationId <> 0 AND EXISTS (
  SELECT 1 FROM CUPTI_ACTIVITY_KIND_RUNTIME r
   WHERE r.correlationId = g.correlationId AND ((r.globalTid >> 24) & 16777215) = ((g.globalPid >> 24) & 16777215));
-- name: flows_memset
SELECT count(*) FROM CUPTI_ACTIVITY_KIND_MEMSET g WHERE g.correlationId <> 0 AND EXISTS (
  SELECT 1 FROM CUPTI_ACTIVITY_KIND_RUNTIME r
   WHERE r.correlationId = g.correlationId AND ((r.globalTid >> 24) & 16777215) = ((g.globalPid >> 24) & 16777215));
-- name: streams_kernel
SELECT DISTINCT deviceId, streamId FROM CUPTI_ACTIVITY_KIND_KERNEL ORDER BY 1, 2;
-- name: streams_memcpy
SELECT DISTINCT deviceId, streamId FROM CUPTI_ACTIVITY_KIND_MEMCPY ORDER BY 1, 2;
-- name: streams_memset
SELECT DISTINCT deviceId, streamId FROM CUPTI_ACTIVITY_KIND_MEMSET ORDER BY 1, 2;
-- name: threads_runtime
SELECT DISTINCT (globalTid >> 24) & 16777215, globalTid & 16777215 FROM CUPTI_ACTIVITY_KIND_RUNTIME ORDER BY 1, 2;
-- name: threads_osrt
SELECT DISTINCT (globalTid >> 24) & 16777215, globalTid & 16777215 FROM OSRT_API ORDER BY 1, 2;
-- name: runtime_thread_names
SELECT DISTINCT (r.globalTid >> 24) & 16777215, r.globalTid & 16777215, s.value
  FROM CUPTI_ACTIVITY_KIND_RUNTIME r JOIN ThreadNames t ON t.globalTid = r.globalTid JOIN StringIds s ON s.id = t.nameId
  ORDER BY 1, 2;
-- name: devices
SELECT id, name, smCount, totalMemory FROM TARGET_INFO_GPU WHERE computeMajor > 0 ORDER BY id;
-- name: base_time_ns
SELECT utcEpochNs FROM TARGET_INFO_SESSION_START_TIME;
-- name: schema_version_new
SELECT value FROM META_DATA_EXPORT WHERE name = 'EXPORT_SCHEMA_VERSION';
-- name: schema_version_old
SELECT value FROM EXPORT_META_DATA WHERE name = 'EXPORT_SCHEMA_VERSION';
-- name: memory_points
SELECT deviceId, count(*) FROM CUDA_GPU_MEMORY_USAGE_EVENTS WHERE memoryOperationType IN (0, 1) GROUP BY 1 ORDER BY 1;
-- name: memory_peak_final
SELECT deviceId, memKind, max(run), (SELECT sum(CASE memoryOperationType WHEN 0 THEN bytes ELSE -bytes END)
                                       FROM CUDA_GPU_MEMORY_USAGE_EVENTS e2
                                      WHERE e2.deviceId = w.deviceId AND e2.memKind = w.memKind
                                        AND e2.memoryOperationType IN (0, 1))
  FROM (SELECT deviceId, memKind, sum(CASE memoryOperationType WHEN 0 THEN bytes ELSE -bytes END)
               OVER (PARTITION BY globalPid, deviceId, memKind ORDER BY start, rowid ROWS UNBOUNDED PRECEDING) AS run
          FROM CUDA_GPU_MEMORY_USAGE_EVENTS WHERE memoryOperationType IN (0, 1)) w
 GROUP BY 1, 2 ORDER BY 1, 2;
