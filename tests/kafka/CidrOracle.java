// Asks Kafka 4.4's CidrUtils (the parser of KIP-1276's CIDR ACL hosts) about each line of a file, one answer a line:
//   "V <hex cidr>"          -> OK, or ERR <the IllegalArgumentException's message, hex-encoded UTF-8>
//   "R <hex addr> <hex cidr>" -> true or false (CidrUtils.isInRange)
// Run: java -cp "$KAFKA_LIBS/*" tests/kafka/CidrOracle.java QUERIES_FILE
import org.apache.kafka.server.authorizer.internals.CidrUtils;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.HexFormat;

public class CidrOracle {
    static String unhex(String s) {
        return new String(HexFormat.of().parseHex(s), StandardCharsets.UTF_8);
    }

    public static void main(String[] args) throws Exception {
        StringBuilder out = new StringBuilder();
        for (String line : Files.readAllLines(Paths.get(args[0]))) {
            String[] f = line.strip().split(" ", -1);
            if (f[0].equals("V")) {
                try {
                    CidrUtils.validate(unhex(f[1]));
                    out.append("OK\n");
                } catch (IllegalArgumentException e) {
                    out.append("ERR ").append(HexFormat.of().formatHex(
                        String.valueOf(e.getMessage()).getBytes(StandardCharsets.UTF_8))).append('\n');
                }
            } else {
                out.append(CidrUtils.isInRange(unhex(f[1]), unhex(f[2]))).append('\n');
            }
        }
        System.out.print(out);
    }
}
