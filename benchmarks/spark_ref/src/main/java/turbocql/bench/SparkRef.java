package turbocql.bench;

import static org.apache.spark.sql.functions.count;
import static org.apache.spark.sql.functions.lit;

import java.io.BufferedReader;
import java.io.File;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.jar.Attributes;
import java.util.jar.JarFile;
import java.util.jar.Manifest;

import com.datastax.spark.connector.rdd.ReadConf$;
import com.datastax.spark.connector.writer.WriteConf$;
import org.apache.spark.SparkConf;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Observation;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;

/**
 * The Spark Cassandra Connector's side of benchmarks/run_spark.py: one local[2] SparkSession
 * with the connector, one phase per process.
 *
 * <pre>
 * SparkRef write|read --rows N [--host H] [--port P] [--keyspace K] [--table T]
 *                     [--warmup-table W] [--warmup-rows M] [--sync-stdin]
 * </pre>
 *
 * <p>write: {@code spark.range(N)} with the computed columns of {@link #COLUMNS} appended to the
 * table with format "org.apache.spark.sql.cassandra"; read: the whole table loaded and
 * materialized through the "noop" sink, its rows counted by an {@link Observation} on the way.
 * Before the timed phase, a warm-up: the same write of M rows into the warm-up table, then the
 * same read of it. The timed phase is framed by the lines "TURBOCQL-SPARK-BENCH start" and
 * "TURBOCQL-SPARK-BENCH end" on stdout; with --sync-stdin the client waits after each for a
 * line on stdin (the runner samples CPU in between). Last line: one JSON object.
 *
 * <p>The same columns, expressions and materialization as benchmarks/clients/spark_turbocql.py
 * (tests/unit/test_bench_spark.py checks that the expressions match).
 */
public final class SparkRef {
    static final String MARKER = "TURBOCQL-SPARK-BENCH";
    static final String FORMAT = "org.apache.spark.sql.cassandra";

    /** The table's columns from spark.range's id (the same strings as spark_turbocql.py's). */
    static final String[] COLUMNS = {
        "id",
        "CAST(id % 100000 AS INT) AS i",
        "concat('name-', CAST(id AS STRING), '-', repeat('x', CAST(id % 20 AS INT))) AS t",
        "CAST(id AS DOUBLE) / 7 AS d",
        "timestamp_millis(1704067200000 + id * 1000) AS ts",
    };

    private SparkRef() {}

    public static void main(String[] argv) throws Exception {
        if (argv.length < 1 || !(argv[0].equals("write") || argv[0].equals("read"))) {
            System.err.println("usage: SparkRef write|read --rows N [--host H] [--port P] [--keyspace K] "
                    + "[--table T] [--warmup-table W] [--warmup-rows M] [--client-name C] [--conf KEY=VALUE]... "
                    + "[--sync-stdin]");
            System.exit(2);
        }
        String phase = argv[0];
        Map<String, String> opt = new HashMap<>();
        opt.put("host", "127.0.0.1");
        opt.put("port", "9042");
        opt.put("keyspace", "spark_bench");
        opt.put("table", "rows");
        opt.put("warmup-table", "warmup");
        opt.put("warmup-rows", "20000");
        opt.put("rows", "1000000");
        opt.put("client-name", "connector");
        boolean syncStdin = false;
        // --conf KEY=VALUE (repeatable): Spark settings beyond the defaults (the tuned writer's).
        Map<String, String> extraConf = new LinkedHashMap<>();
        for (int i = 1; i < argv.length; i++) {
            String a = argv[i];
            if (a.equals("--sync-stdin")) {
                syncStdin = true;
            } else if (a.equals("--conf") && i + 1 < argv.length && argv[i + 1].contains("=")) {
                String kv = argv[++i];
                extraConf.put(kv.substring(0, kv.indexOf('=')), kv.substring(kv.indexOf('=') + 1));
            } else if (a.startsWith("--") && i + 1 < argv.length && opt.containsKey(a.substring(2))) {
                opt.put(a.substring(2), argv[++i]);
            } else {
                System.err.println("unknown argument: " + a);
                System.exit(2);
            }
        }
        long rows = Long.parseLong(opt.get("rows"));
        long warmupRows = Long.parseLong(opt.get("warmup-rows"));
        String keyspace = opt.get("keyspace");

        SparkSession.Builder builder = SparkSession.builder()
                .master("local[2]")
                .appName("turbocql-bench-spark-connector")
                .config("spark.ui.enabled", "false")
                .config("spark.ui.showConsoleProgress", "false")
                .config("spark.cassandra.connection.host", opt.get("host"))
                .config("spark.cassandra.connection.port", opt.get("port"));
        for (Map.Entry<String, String> e : extraConf.entrySet()) {
            builder = builder.config(e.getKey(), e.getValue());
        }
        SparkSession spark = builder.getOrCreate();
        spark.sparkContext().setLogLevel("WARN");
        BufferedReader stdin = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        try {
            // Warm-up: the same write and read, smaller, into the warm-up table.
            long t0 = System.nanoTime();
            write(spark, keyspace, opt.get("warmup-table"), warmupRows);
            long warm = read(spark, keyspace, opt.get("warmup-table"));
            double warmupSeconds = (System.nanoTime() - t0) / 1e9;

            int partitions = phase.equals("write")
                    ? spark.range(rows).rdd().getNumPartitions()
                    : table(spark, keyspace, opt.get("table")).rdd().getNumPartitions();

            marker("start", syncStdin, stdin);
            long start = System.nanoTime();
            long done;
            if (phase.equals("write")) {
                write(spark, keyspace, opt.get("table"), rows);
                done = rows;
            } else {
                done = read(spark, keyspace, opt.get("table"));
            }
            double seconds = (System.nanoTime() - start) / 1e9;
            marker("end", syncStdin, stdin);

            String[] versions = versions();
            StringBuilder json = new StringBuilder("{");
            field(json, "client", opt.get("client-name")).append(',');
            field(json, "phase", phase).append(',');
            json.append("\"rows\":").append(done).append(',');
            json.append("\"seconds\":").append(seconds).append(',');
            json.append("\"partitions\":").append(partitions).append(',');
            json.append("\"warmup_rows\":").append(warm).append(',');
            json.append("\"warmup_seconds\":").append(warmupSeconds).append(',');
            field(json, "materialization", phase.equals("read") ? "observe(count) + noop sink" : "append").append(',');
            field(json, "spark_version", spark.version()).append(',');
            field(json, "connector_version", versions[1]).append(',');
            field(json, "scala_version", scala.util.Properties.versionNumberString()).append(',');
            field(json, "java_version", System.getProperty("java.version")).append(',');
            // The connector's effective settings (its defaults, but for the host and any --conf).
            SparkConf conf = spark.sparkContext().getConf();
            field(json, "connector_read_conf", ReadConf$.MODULE$.fromSparkConf(conf).toString()).append(',');
            field(json, "connector_write_conf", WriteConf$.MODULE$.fromSparkConf(conf).toString()).append(',');
            field(json, "jvm", System.getProperty("java.vm.name") + " " + System.getProperty("java.vm.version"));
            json.append('}');
            System.out.println(json);
            System.out.flush();
        } finally {
            spark.stop();
        }
    }

    static Dataset<Row> table(SparkSession spark, String keyspace, String table) {
        return spark.read().format(FORMAT).option("keyspace", keyspace).option("table", table).load();
    }

    static void write(SparkSession spark, String keyspace, String table, long rows) {
        spark.range(rows)
                .selectExpr(COLUMNS)
                .write()
                .format(FORMAT)
                .option("keyspace", keyspace)
                .option("table", table)
                .mode("append")
                .save();
    }

    /** Every row of the table decoded into Spark rows (noop sink), counted on the way. */
    static long read(SparkSession spark, String keyspace, String table) throws InterruptedException {
        Observation obs = new Observation("rows");
        table(spark, keyspace, table)
                .observe(obs, count(lit(1)).as("rows"))
                .write()
                .format("noop")
                .mode("overwrite")
                .save();
        return ((Number) obs.getAsJava().get("rows")).longValue();
    }

    static void marker(String what, boolean syncStdin, BufferedReader stdin) throws IOException {
        System.out.println(MARKER + " " + what);
        System.out.flush();
        if (syncStdin) {
            stdin.readLine(); // the runner's sample is taken; EOF is fine too
        }
    }

    /** Spark's and the connector's versions from this jar's manifest (set by pom.xml). */
    static String[] versions() {
        String[] out = {"", ""};
        try (JarFile jar = new JarFile(new File(SparkRef.class.getProtectionDomain().getCodeSource().getLocation().toURI()))) {
            Manifest m = jar.getManifest();
            if (m != null) {
                Attributes a = m.getMainAttributes();
                out[0] = String.valueOf(a.getValue("Spark-Version"));
                out[1] = String.valueOf(a.getValue("Connector-Version"));
            }
        } catch (IOException | URISyntaxException | RuntimeException e) {
            // run from classes/, not the jar: leave them empty
        }
        return out;
    }

    static StringBuilder field(StringBuilder json, String key, String value) {
        json.append('"').append(key).append("\":\"");
        for (char c : String.valueOf(value).toCharArray()) {
            if (c == '"' || c == '\\') {
                json.append('\\').append(c);
            } else if (c < 0x20) {
                json.append(String.format("\\u%04x", (int) c));
            } else {
                json.append(c);
            }
        }
        return json.append('"');
    }
}
