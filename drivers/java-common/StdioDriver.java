// The driver side of authmock's stdio protocol (version 1) for the Java
// drivers: reads the runner's JSON lines, runs every login and request on its
// own thread (the runner sends concurrent calls on purpose), answers each id
// exactly once, and exits after shutdown. A driver supplies hello, login and
// request handlers that return the outcome object, and, for the `cancel`
// extension, a canceller that stops a running request by its message id.
import com.google.gson.Gson;
import com.google.gson.JsonObject;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

public final class StdioDriver {
    public interface Handler {
        JsonObject handle(JsonObject message) throws Exception;
    }

    /** Cancels the running request whose message id is given; false when none is running. */
    public interface Canceller {
        boolean cancel(String requestId);
    }

    static final Gson gson = new Gson();
    static final Object out = new Object();

    static void answer(JsonObject message) {
        synchronized (out) {
            System.out.println(gson.toJson(message));
            System.out.flush();
            // The runner gone (its end of the pipe closed; PrintStream keeps the
            // error to itself): leave quietly, as at the end of stdin.
            if (System.out.checkError()) System.exit(0);
        }
    }

    /** An outcome object: `outcome`, and `ok` when it is "ok". */
    public static JsonObject outcome(String outcome) {
        JsonObject result = new JsonObject();
        result.addProperty("ok", outcome.equals("ok"));
        result.addProperty("outcome", outcome);
        return result;
    }

    public static void run(String name, String version, Consumer<JsonObject> hello, Handler login, Handler request) throws Exception {
        run(name, version, hello, login, request, null);
    }

    /** With a canceller, the driver declares `cancel`; the cancelled request answers for itself. */
    public static void run(String name, String version, Consumer<JsonObject> hello, Handler login, Handler request, Canceller canceller)
            throws Exception {
        ExecutorService pool = Executors.newCachedThreadPool();
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, "UTF-8"));
        String line;
        while ((line = in.readLine()) != null) {
            JsonObject m = gson.fromJson(line, JsonObject.class);
            String id = m.get("id").getAsString(), op = m.get("op").getAsString();
            if (op.equals("hello")) {
                hello.accept(m);
                JsonObject result = outcome("ok");
                result.remove("outcome");
                result.addProperty("id", id);
                result.addProperty("driver", name);
                result.addProperty("version", version);
                result.add("profiles", gson.toJsonTree(new String[] {"oauth2"}));
                result.add("capabilities", gson.toJsonTree(canceller == null ? new String[] {"url"} : new String[] {"url", "cancel"}));
                answer(result);
            } else if (op.equals("shutdown")) {
                pool.shutdown();
                pool.awaitTermination(10, TimeUnit.SECONDS);
                JsonObject result = new JsonObject();
                result.addProperty("id", id);
                result.addProperty("ok", true);
                answer(result);
                System.exit(0);
            } else if (op.equals("login") || op.equals("request")) {
                Handler handler = op.equals("login") ? login : request;
                pool.submit(() -> {
                    JsonObject result;
                    try {
                        result = handler.handle(m);
                    } catch (Exception e) { // a library exception the glue did not map: the app saw no answer
                        e.printStackTrace();
                        result = outcome("transport_error");
                        result.addProperty("message", e.toString());
                    }
                    result.addProperty("id", id);
                    answer(result);
                });
            } else if (op.equals("cancel") && canceller != null) {
                // Answered at once: the cancelled call answers for itself.
                String call = m.get("call").getAsString();
                JsonObject result = outcome("ok");
                result.addProperty("id", id);
                if (!canceller.cancel(call)) result.addProperty("message", "no call " + call + " is in flight");
                answer(result);
            } else {
                JsonObject result = outcome("unsupported");
                result.addProperty("id", id);
                result.addProperty("message", "unknown op " + op);
                answer(result);
            }
        }
    }
}
