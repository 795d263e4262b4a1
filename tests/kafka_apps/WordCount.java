import java.time.Duration;
import java.util.Arrays;
import java.util.Locale;
import java.util.Properties;
import java.util.concurrent.CountDownLatch;

import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.kstream.Produced;

/**
 * A Kafka Streams word count (the DSL: flatMapValues, groupBy — a repartition topic —, count — a changelogged
 * store —, to) with exactly_once_v2, for tests/kafka_apps/test_streams_word_count.py.
 *
 * Arguments: bootstrap servers, application id, input topic, output topic, state directory. The store's cache is
 * off, so every increment is written: the read_committed output holds, per word, its counts 1, 2, ... n exactly
 * once each. Prints "STATE <new state>" on each state change; stops cleanly on SIGTERM (the shutdown hook closes the
 * application, committing what it has).
 */
public class WordCount {
    public static void main(String[] args) throws InterruptedException {
        String bootstrap = args[0], appId = args[1], input = args[2], output = args[3], stateDir = args[4];
        Properties props = new Properties();
        props.put(StreamsConfig.APPLICATION_ID_CONFIG, appId);
        props.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        props.put(StreamsConfig.PROCESSING_GUARANTEE_CONFIG, StreamsConfig.EXACTLY_ONCE_V2);
        props.put(StreamsConfig.REPLICATION_FACTOR_CONFIG, 3);
        props.put(StreamsConfig.STATE_DIR_CONFIG, stateDir);
        props.put(StreamsConfig.STATESTORE_CACHE_MAX_BYTES_CONFIG, 0);
        props.put(StreamsConfig.COMMIT_INTERVAL_MS_CONFIG, 200);
        props.put(StreamsConfig.NUM_STREAM_THREADS_CONFIG, 1);
        props.put(StreamsConfig.DEFAULT_KEY_SERDE_CLASS_CONFIG, Serdes.StringSerde.class);
        props.put(StreamsConfig.DEFAULT_VALUE_SERDE_CLASS_CONFIG, Serdes.StringSerde.class);
        props.put(StreamsConfig.consumerPrefix("session.timeout.ms"), 10000);
        props.put(StreamsConfig.consumerPrefix("heartbeat.interval.ms"), 1000);
        props.put(StreamsConfig.consumerPrefix("metadata.max.age.ms"), 2000);
        props.put(StreamsConfig.producerPrefix("metadata.max.age.ms"), 2000);
        props.put(StreamsConfig.producerPrefix("transaction.timeout.ms"), 20000);

        StreamsBuilder builder = new StreamsBuilder();
        builder.<String, String>stream(input)
            .flatMapValues(line -> Arrays.asList(line.toLowerCase(Locale.ROOT).split("\\W+")))
            .filter((key, word) -> !word.isEmpty())
            .groupBy((key, word) -> word)
            .count()
            .toStream()
            .to(output, Produced.with(Serdes.String(), Serdes.Long()));

        KafkaStreams streams = new KafkaStreams(builder.build(), props);
        streams.setStateListener((now, before) -> System.out.println("STATE " + now));
        streams.setUncaughtExceptionHandler(e -> {
            System.out.println("UNCAUGHT " + e);
            e.printStackTrace(System.out);
            return org.apache.kafka.streams.errors.StreamsUncaughtExceptionHandler.StreamThreadExceptionResponse
                .REPLACE_THREAD;
        });
        CountDownLatch stopped = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            streams.close(Duration.ofSeconds(30));
            System.out.println("CLOSED");
            stopped.countDown();
        }));
        streams.start();
        stopped.await();
    }
}
