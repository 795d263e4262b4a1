// Prints the iteration order of Java's and Scala's hash collections for key sets read from a file, one set a line:
//   <kind> TAB key TAB key ...        ->        key TAB key ...   (the same keys, in the collection's order)
// kinds: jhashmap (java.util.HashMap filled key by key), jhashmap-sized (new HashMap<>(n) filled with n keys),
// jhashmap-copy (a HashMap filled at once by putAll),
// scala-mutable (scala.collection.mutable.HashMap), scala-mutable-set (scala.collection.mutable.HashSet, as the
// partition of a Java set's Scala view builds), scala-mutable-concat (the mutable HashMap "a ++ b" builds from two
// such maps holding the first and the second half of the keys), scala-set (a Scala immutable Set built from the
// keys in order, as .toSet does), scala-hashmap (scala.collection.immutable.HashMap built by updated, as groupBy
// does); a kind prefixed "tp-" has TopicPartition keys written topic:partition. tests/test_java_order_jvm.py checks
// kraftwire.java_order against this.
// Run: java -cp "$KAFKA_LIBS/*" tests/kafka/JavaOrders.java <file>
import java.nio.file.*;
import java.util.*;
import org.apache.kafka.common.TopicPartition;

public class JavaOrders {
    static Object key(boolean tp, String text) {
        if (!tp) return text;
        int colon = text.lastIndexOf(':');
        return new TopicPartition(text.substring(0, colon), Integer.parseInt(text.substring(colon + 1)));
    }

    static String text(Object key) {
        return key instanceof TopicPartition tp ? tp.topic() + ":" + tp.partition() : (String) key;
    }

    static Iterable<Object> order(String kind, List<Object> keys) {
        switch (kind) {
            case "jhashmap": {
                Map<Object, Object> m = new HashMap<>();
                for (Object k : keys) m.put(k, k);
                return m.keySet();
            }
            case "jhashmap-sized": {
                Map<Object, Object> m = new HashMap<>(keys.size());
                for (Object k : keys) m.put(k, k);
                return m.keySet();
            }
            case "jhashmap-copy": {
                Map<Object, Object> source = new LinkedHashMap<>();
                for (Object k : keys) source.put(k, k);
                Map<Object, Object> m = new HashMap<>();
                m.putAll(source);
                return m.keySet();
            }
            case "scala-mutable": {
                var m = new scala.collection.mutable.HashMap<Object, Object>();
                for (Object k : keys) m.put(k, k);
                return scala.jdk.javaapi.CollectionConverters.asJava(m.keySet());
            }
            case "scala-mutable-concat": {
                var first = new scala.collection.mutable.HashMap<Object, Object>();
                var second = new scala.collection.mutable.HashMap<Object, Object>();
                for (int i = 0; i < keys.size(); i++)
                    (i < keys.size() / 2 ? first : second).put(keys.get(i), keys.get(i));
                var joined = (scala.collection.mutable.HashMap<Object, Object>) first.concat(second);
                return scala.jdk.javaapi.CollectionConverters.asJava(joined.keySet());
            }
            case "scala-mutable-set": {
                var set = new scala.collection.mutable.HashSet<Object>();
                for (Object k : keys) set.add(k);
                return scala.jdk.javaapi.CollectionConverters.asJava(set);
            }
            case "scala-set": {
                var set = scala.jdk.javaapi.CollectionConverters.asScala(keys).toSet();
                return scala.jdk.javaapi.CollectionConverters.asJava(set);
            }
            case "scala-hashmap": {
                scala.collection.immutable.HashMap<Object, Object> m =
                        scala.collection.immutable.HashMap$.MODULE$.empty();
                for (Object k : keys) m = m.updated(k, k);
                return scala.jdk.javaapi.CollectionConverters.asJava(m.keySet());
            }
            default:
                throw new IllegalArgumentException(kind);
        }
    }

    public static void main(String[] args) throws Exception {
        StringBuilder out = new StringBuilder();
        for (String line : Files.readAllLines(Path.of(args[0]))) {
            String[] parts = line.split("\t", -1);
            boolean tp = parts[0].startsWith("tp-");
            List<Object> keys = new ArrayList<>();
            for (int i = 1; i < parts.length; i++) keys.add(key(tp, parts[i]));
            StringJoiner joined = new StringJoiner("\t");
            for (Object k : order(tp ? parts[0].substring(3) : parts[0], keys)) joined.add(text(k));
            out.append(joined).append('\n');
        }
        System.out.print(out);
    }
}
