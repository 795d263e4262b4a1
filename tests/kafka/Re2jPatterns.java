// Compiles each pattern with RE2/J, the regular-expression library Kafka's group coordinator compiles a consumer
// group's SubscribedTopicRegex with (Kafka 4.4: re2j 1.8), and prints one line per pattern:
//   OK <the indexes of the names the pattern matches whole, comma-separated>
//   ERR <PatternSyntaxException.getDescription(): what Kafka puts in its INVALID_REGULAR_EXPRESSION message>
// Patterns and names are read one a line, hex-encoded UTF-8 (a pattern may hold any character, a newline too).
// Run: java -cp "$KAFKA_LIBS/*" tests/kafka/Re2jPatterns.java PATTERNS_FILE NAMES_FILE
import com.google.re2j.Pattern;
import com.google.re2j.PatternSyntaxException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.HexFormat;
import java.util.List;
import java.util.StringJoiner;

public class Re2jPatterns {
    static String unhex(String line) {
        return new String(HexFormat.of().parseHex(line.strip()), StandardCharsets.UTF_8);
    }

    public static void main(String[] args) throws Exception {
        List<String> names = Files.readAllLines(Paths.get(args[1])).stream().map(Re2jPatterns::unhex).toList();
        StringBuilder out = new StringBuilder();
        for (String line : Files.readAllLines(Paths.get(args[0]))) {
            try {
                Pattern p = Pattern.compile(unhex(line));
                StringJoiner matched = new StringJoiner(",");
                for (int i = 0; i < names.size(); i++) {
                    if (p.matcher(names.get(i)).matches()) matched.add(Integer.toString(i));
                }
                out.append("OK ").append(matched).append('\n');
            } catch (PatternSyntaxException e) {
                out.append("ERR ").append(e.getDescription()).append('\n');
            }
        }
        System.out.print(out);
    }
}
