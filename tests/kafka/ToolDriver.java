import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import org.apache.kafka.common.utils.internals.Exit;

import java.io.BufferedReader;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.FileDescriptor;
import java.io.FileInputStream;
import java.io.FileOutputStream;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.io.PrintStream;
import java.lang.reflect.Field;
import java.lang.reflect.InvocationTargetException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Runs Kafka's command-line tools one after another in one JVM, as {@code bin/kafka-*.sh} would run each in its own:
 * starting a JVM per tool costs a second or two on a small machine, and a test runs dozens of them.
 *
 * <p>Reads one JSON object per line from standard input, {@code {"main": CLASS, "args": [...], "stdin": TEXT}}, calls
 * {@code CLASS.main(args)} with {@code System.in} reading TEXT and {@code System.out}/{@code System.err} captured, and
 * answers one JSON line {@code {"exit": N, "out": TEXT, "err": TEXT}} on its own standard output. The exit status is
 * what a separate JVM would have exited with: the first {@code Exit.exit}/{@code Exit.halt} status (Kafka's tools exit
 * through {@code org.apache.kafka.common.utils.internals.Exit}, whose procedure is replaced here by one that unwinds the tool),
 * else 1 when {@code main} threw, else 0. The shutdown hooks a tool registered (through {@code Exit} or
 * {@code Runtime}: the verifiable clients print their last JSON lines from one) run when it ends, as at a JVM's exit.
 *
 * <p>Needs {@code --add-opens java.base/java.lang=ALL-UNNAMED} to find the {@code Runtime} hooks a tool added.
 */
public final class ToolDriver {
    /** Thrown through a tool by the replaced exit procedure, so that its {@code main} stops where it exited. */
    static final class ExitCalled extends RuntimeException {
        ExitCalled(int status) {
            super("Exit.exit(" + status + ")", null, false, false);
        }
    }

    /** One stream installed once as System.out/err: tools that keep {@code System.out} still write to the command. */
    static final class Switched extends OutputStream {
        volatile OutputStream target = OutputStream.nullOutputStream();

        @Override public void write(int b) throws java.io.IOException { target.write(b); }
        @Override public void write(byte[] b, int off, int len) throws java.io.IOException { target.write(b, off, len); }
    }

    static final class SwitchedIn extends InputStream {
        volatile InputStream source = InputStream.nullInputStream();

        @Override public int read() throws java.io.IOException { return source.read(); }
        @Override public int read(byte[] b, int off, int len) throws java.io.IOException { return source.read(b, off, len); }
        @Override public int available() throws java.io.IOException { return source.available(); }
    }

    private static final Object LOCK = new Object();
    private static Integer exitStatus;
    private static final List<Runnable> EXIT_HOOKS = new ArrayList<>();

    private static final Switched OUT = new Switched();
    private static final Switched ERR = new Switched();

    /** The replaced exit procedure: the first exit decides the status and, as a JVM's would, ends the tool's output
     *  (what the tool prints while unwinding from here never reached a terminal); the shutdown hooks still print. */
    private static void exited(int status) {
        synchronized (LOCK) {
            if (exitStatus == null) {
                exitStatus = status;
                OUT.target = OutputStream.nullOutputStream();
                ERR.target = OutputStream.nullOutputStream();
            }
        }
        throw new ExitCalled(status);
    }

    @SuppressWarnings("unchecked")
    private static Set<Thread> runtimeHooks() throws ReflectiveOperationException {
        Field hooks = Class.forName("java.lang.ApplicationShutdownHooks").getDeclaredField("hooks");
        hooks.setAccessible(true);
        synchronized (Class.forName("java.lang.ApplicationShutdownHooks")) {
            return new HashSet<>(((Map<Thread, Thread>) hooks.get(null)).keySet());
        }
    }

    /** Runs what a JVM exit would have: the hooks added since {@code before}, concurrently, and waits for them. */
    private static void runHooks(Set<Thread> before) throws Exception {
        List<Thread> threads = new ArrayList<>();
        for (Thread t : runtimeHooks()) {
            if (!before.contains(t)) {
                Runtime.getRuntime().removeShutdownHook(t);
                threads.add(t);
            }
        }
        synchronized (LOCK) {
            for (Runnable r : EXIT_HOOKS) threads.add(new Thread(r, "exit-hook"));
            EXIT_HOOKS.clear();
        }
        for (Thread t : threads) t.start();
        for (Thread t : threads) t.join(30_000);
    }

    public static void main(String[] argv) throws Exception {
        PrintStream answers = new PrintStream(new FileOutputStream(FileDescriptor.out), true, StandardCharsets.UTF_8);
        SwitchedIn in = new SwitchedIn();
        System.setOut(new PrintStream(OUT, true, StandardCharsets.UTF_8));
        System.setErr(new PrintStream(ERR, true, StandardCharsets.UTF_8));
        System.setIn(in);
        Exit.setExitProcedure((status, message) -> exited(status));
        Exit.setHaltProcedure((status, message) -> exited(status));
        Exit.setShutdownHookAdder((name, hook) -> {
            synchronized (LOCK) {
                EXIT_HOOKS.add(hook);
            }
        });
        org.slf4j.LoggerFactory.getLogger(ToolDriver.class);  // its one-time notice (no binding) goes nowhere
        ObjectMapper json = new ObjectMapper();
        BufferedReader commands =
                new BufferedReader(new InputStreamReader(new FileInputStream(FileDescriptor.in), StandardCharsets.UTF_8));
        for (String line = commands.readLine(); line != null; line = commands.readLine()) {
            if (line.isBlank()) continue;
            JsonNode command = json.readTree(line);
            List<String> args = new ArrayList<>();
            command.path("args").forEach(a -> args.add(a.asText()));
            ByteArrayOutputStream stdout = new ByteArrayOutputStream();
            ByteArrayOutputStream stderr = new ByteArrayOutputStream();
            OUT.target = stdout;
            ERR.target = stderr;
            in.source = new ByteArrayInputStream(command.path("stdin").asText("").getBytes(StandardCharsets.UTF_8));
            synchronized (LOCK) {
                exitStatus = null;
            }
            Set<Thread> hooksBefore = runtimeHooks();
            boolean threw = false;
            try {
                Class.forName(command.get("main").asText())
                        .getMethod("main", String[].class).invoke(null, (Object) args.toArray(new String[0]));
            } catch (InvocationTargetException e) {
                if (!(e.getCause() instanceof ExitCalled)) {
                    threw = true;
                    e.getCause().printStackTrace();
                }
            } catch (ReflectiveOperationException e) {
                threw = true;
                e.printStackTrace();
            }
            OUT.target = stdout;
            ERR.target = stderr;
            runHooks(hooksBefore);
            System.out.flush();
            System.err.flush();
            int status;
            synchronized (LOCK) {
                status = exitStatus != null ? exitStatus : (threw ? 1 : 0);
            }
            OUT.target = OutputStream.nullOutputStream();
            ERR.target = OutputStream.nullOutputStream();
            ObjectNode answer = json.createObjectNode();
            answer.put("exit", status);
            answer.put("out", stdout.toString(StandardCharsets.UTF_8));
            answer.put("err", stderr.toString(StandardCharsets.UTF_8));
            answers.println(json.writeValueAsString(answer));
        }
    }
}
