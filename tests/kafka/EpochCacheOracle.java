// Runs Kafka's own LeaderEpochFileCache on scripts of operations read from a file, one script a line, operations
// separated by ';':
//   assign <epoch> <offset> | start <offset> (truncateFromStart) | end <offset> (truncateFromEnd) | ask <epoch> <leo>
// and prints, for each line, what each "ask" answered (endOffsetFor) as "<epoch> <offset>", then "|" and the cache's
// entries as "<epoch>@<start>", separated by TAB. tests/kafka/test_epoch_cache_oracle.py checks
// kraftwire.log.epoch_cache against it.
// Run: java -cp "$KAFKA_LIBS/*" tests/kafka/EpochCacheOracle.java <file>
import java.io.File;
import java.nio.file.*;
import java.util.*;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.server.util.KafkaScheduler;
import org.apache.kafka.storage.internals.checkpoint.LeaderEpochCheckpointFile;
import org.apache.kafka.storage.internals.epoch.LeaderEpochFileCache;
import org.apache.kafka.storage.internals.log.EpochEntry;
import org.apache.kafka.storage.internals.log.LogDirFailureChannel;

public class EpochCacheOracle {
    public static void main(String[] args) throws Exception {
        Path dir = Files.createTempDirectory("epoch-cache-oracle");
        KafkaScheduler scheduler = new KafkaScheduler(1);
        scheduler.startup();
        StringBuilder out = new StringBuilder();
        int n = 0;
        for (String line : Files.readAllLines(Paths.get(args[0]))) {
            File file = dir.resolve("leader-epoch-checkpoint-" + n++).toFile();
            LeaderEpochFileCache cache = new LeaderEpochFileCache(new TopicPartition("t", 0),
                new LeaderEpochCheckpointFile(file, new LogDirFailureChannel(1)), scheduler);
            List<String> answers = new ArrayList<>();
            for (String op : line.split(";")) {
                String[] w = op.trim().split(" ");
                switch (w[0]) {
                    case "assign": cache.assign(Integer.parseInt(w[1]), Long.parseLong(w[2])); break;
                    case "start": cache.truncateFromStartAsyncFlush(Long.parseLong(w[1])); break;
                    case "end": cache.truncateFromEndAsyncFlush(Long.parseLong(w[1])); break;
                    case "ask": {
                        Map.Entry<Integer, Long> e = cache.endOffsetFor(Integer.parseInt(w[1]), Long.parseLong(w[2]));
                        answers.add(e.getKey() + " " + e.getValue());
                        break;
                    }
                    default: throw new IllegalArgumentException(op);
                }
            }
            List<String> entries = new ArrayList<>();
            for (EpochEntry e : cache.epochEntries()) entries.add(e.epoch() + "@" + e.startOffset());
            out.append(String.join("\t", answers)).append("\t|\t").append(String.join("\t", entries)).append("\n");
        }
        scheduler.shutdown();
        System.out.print(out);
    }
}
