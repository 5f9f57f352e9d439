// ktc's driver for the Apache Kafka Java client (org.apache.kafka:kafka-clients): JSON lines on stdin, one JSON
// answer per line on stdout (implementations/clients/README.md). It uses the client as an application would and
// judges nothing; every exception the client raises is answered as ok:false.

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndTimestamp;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.ApiException;
import org.apache.kafka.common.errors.RetriableException;
import org.apache.kafka.common.errors.TimeoutException;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;

public final class KtcDriver {
    private static final ObjectMapper JSON = new ObjectMapper();

    public static void main(String[] args) throws Exception {
        PrintStream out = new PrintStream(System.out, true, "UTF-8");
        System.setOut(System.err); // anything the client prints goes to the log, never into the answers
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        for (String line; (line = in.readLine()) != null; ) {
            if (line.isBlank()) continue;
            ObjectNode answer;
            try {
                answer = handle(JSON.readTree(line));
            } catch (Throwable error) {
                answer = failure(error, null);
            }
            out.println(JSON.writeValueAsString(answer));
        }
    }

    static ObjectNode handle(JsonNode request) throws Exception {
        String op = request.path("op").asText();
        switch (op) {
            case "hello": {
                ObjectNode answer = ok();
                answer.put("library", "kafka-clients").put("version", clientVersion());
                return answer.put("language", "java");
            }
            case "produce": return produce(request);
            case "consume": return consume(request);
            case "offsets_for_times": return offsetsForTimes(request);
            case "create_topic": return createTopic(request);
            default: return localError("unknown op " + op);
        }
    }

    /** The version kafka-clients reports of itself: its jar's kafka/kafka-version.properties (the class that
     * reads it moved between releases). */
    static String clientVersion() throws java.io.IOException {
        Properties props = new Properties();
        try (java.io.InputStream in = KafkaProducer.class.getResourceAsStream("/kafka/kafka-version.properties")) {
            if (in != null) props.load(in);
        }
        return props.getProperty("version", "unknown");
    }

    static ObjectNode produce(JsonNode request) throws Exception {
        int timeoutMs = request.path("timeout_ms").asInt(15000);
        Properties props = common(request);
        props.put("acks", "all");
        props.put("enable.idempotence", "false");
        props.put("compression.type", request.path("compression").asText("none"));
        props.put("linger.ms", "60000"); // the records wait for flush(): one batch
        props.put("batch.size", String.valueOf(16 * 1024 * 1024));
        props.put("request.timeout.ms", String.valueOf(timeoutMs));
        props.put("delivery.timeout.ms", String.valueOf(timeoutMs + 60000));
        props.put("max.block.ms", String.valueOf(timeoutMs));
        String topic = request.path("topic").asText();
        int partition = Integer.parseInt(request.path("partition").asText("0"));
        JsonNode records = request.path("records");
        try (KafkaProducer<byte[], byte[]> producer =
                new KafkaProducer<>(props, new ByteArraySerializer(), new ByteArraySerializer())) {
            long sent = System.currentTimeMillis();
            List<Future<RecordMetadata>> futures = new ArrayList<>();
            for (int i = 0; i < records.size(); i++) {
                JsonNode record = records.get(i);
                JsonNode ts = record.path("timestamp");
                try {
                    ProducerRecord<byte[], byte[]> built = new ProducerRecord<>(topic, partition,
                        ts.isNull() || ts.isMissingNode() ? null : Long.valueOf(ts.asText()),
                        bytes(record.path("key")), bytes(record.path("value")));
                    futures.add(producer.send(built));
                } catch (Throwable error) {
                    return failure(error, i);
                }
            }
            producer.flush();
            return acknowledged(futures, sent, timeoutMs);
        }
    }

    static ObjectNode acknowledged(List<Future<RecordMetadata>> futures, long sent, int timeoutMs) {
        ObjectNode answer = ok();
        ArrayNode offsets = answer.putArray("offsets");
        ArrayNode timestamps = answer.putArray("timestamps");
        List<Throwable> errors = new ArrayList<>();
        for (Future<RecordMetadata> future : futures) {
            try {
                RecordMetadata meta = future.get(timeoutMs, TimeUnit.MILLISECONDS);
                offsets.add(String.valueOf(meta.offset()));
                if (meta.hasTimestamp()) timestamps.add(String.valueOf(meta.timestamp()));
                else timestamps.addNull();
                errors.add(null);
            } catch (ExecutionException error) {
                errors.add(error.getCause());
            } catch (Throwable error) {
                errors.add(error);
            }
        }
        long acked = System.currentTimeMillis();
        int named = namedRecord(errors);
        if (named >= 0) return failure(errors.get(named), errors.stream().distinct().count() > 1 ? named : null);
        return answer.put("sent_ms", String.valueOf(sent)).put("acked_ms", String.valueOf(acked));
    }

    /** The record whose error the broker named: the client gives the named records the broker's exception and
     * their batch mates a plain KafkaException; the first failed record when every error is alike; -1 when none. */
    static int namedRecord(List<Throwable> errors) {
        int first = -1;
        for (int i = 0; i < errors.size(); i++) {
            Throwable error = errors.get(i);
            if (error == null) continue;
            if (first < 0) first = i;
            if (error instanceof ApiException) return i;
        }
        return first;
    }

    static ObjectNode consume(JsonNode request) {
        int count = request.path("count").asInt();
        long deadline = System.currentTimeMillis() + request.path("timeout_ms").asInt(15000);
        TopicPartition tp = partition(request);
        ObjectNode answer = ok();
        ArrayNode out = answer.putArray("records");
        try (KafkaConsumer<byte[], byte[]> consumer = consumer(request)) {
            consumer.assign(Collections.singletonList(tp));
            consumer.seek(tp, Long.parseLong(request.path("offset").asText("0")));
            while (out.size() < count && System.currentTimeMillis() < deadline) {
                for (ConsumerRecord<byte[], byte[]> record : consumer.poll(Duration.ofMillis(200))) {
                    if (out.size() >= count) break;
                    ObjectNode row = out.addObject();
                    row.put("offset", String.valueOf(record.offset()));
                    row.put("timestamp", String.valueOf(record.timestamp()));
                    row.put("timestamp_type", record.timestampType().name);
                    row.put("key", base64(record.key()));
                    row.put("value", base64(record.value()));
                }
            }
        }
        return answer;
    }

    static ObjectNode offsetsForTimes(JsonNode request) {
        TopicPartition tp = partition(request);
        long timestamp = Long.parseLong(request.path("timestamp").asText());
        try (KafkaConsumer<byte[], byte[]> consumer = consumer(request)) {
            Map<TopicPartition, OffsetAndTimestamp> found = consumer.offsetsForTimes(
                Collections.singletonMap(tp, timestamp), Duration.ofMillis(request.path("timeout_ms").asInt(15000)));
            OffsetAndTimestamp hit = found.get(tp);
            ObjectNode answer = ok();
            if (hit == null) return answer.put("found", false);
            answer.put("found", true).put("offset", String.valueOf(hit.offset()));
            return answer.put("timestamp", String.valueOf(hit.timestamp()));
        }
    }

    static ObjectNode createTopic(JsonNode request) throws Exception {
        Map<String, String> configs = new HashMap<>();
        request.path("configs").fields().forEachRemaining(e -> configs.put(e.getKey(), e.getValue().asText()));
        NewTopic topic = new NewTopic(request.path("topic").asText(), request.path("partitions").asInt(1), (short) 1);
        try (Admin admin = Admin.create(common(request))) {
            admin.createTopics(Collections.singletonList(topic.configs(configs))).all()
                .get(request.path("timeout_ms").asInt(15000), TimeUnit.MILLISECONDS);
        } catch (ExecutionException error) {
            return failure(error.getCause(), null);
        }
        return ok();
    }

    static KafkaConsumer<byte[], byte[]> consumer(JsonNode request) {
        Properties props = common(request);
        props.put("enable.auto.commit", "false");
        props.put("auto.offset.reset", "none");
        props.put("default.api.timeout.ms", String.valueOf(request.path("timeout_ms").asInt(15000)));
        return new KafkaConsumer<>(props, new ByteArrayDeserializer(), new ByteArrayDeserializer());
    }

    static Properties common(JsonNode request) {
        Properties props = new Properties();
        props.put("bootstrap.servers", request.path("bootstrap").asText());
        props.put("client.id", "ktc-driver");
        return props;
    }

    static TopicPartition partition(JsonNode request) {
        return new TopicPartition(request.path("topic").asText(), Integer.parseInt(request.path("partition").asText("0")));
    }

    static byte[] bytes(JsonNode node) {
        return node.isNull() || node.isMissingNode() ? null : Base64.getDecoder().decode(node.asText());
    }

    static String base64(byte[] data) {
        return data == null ? null : Base64.getEncoder().encodeToString(data);
    }

    static ObjectNode ok() {
        return JSON.createObjectNode().put("ok", true);
    }

    static ObjectNode localError(String message) {
        ObjectNode answer = JSON.createObjectNode().put("ok", false);
        ObjectNode error = answer.putObject("error");
        error.put("kind", "local").putNull("code");
        error.putNull("retriable");
        error.put("message", message).putNull("record");
        return answer;
    }

    static ObjectNode failure(Throwable error, Integer record) {
        ObjectNode answer = JSON.createObjectNode().put("ok", false);
        ObjectNode out = answer.putObject("error");
        boolean timeout = error instanceof TimeoutException || error instanceof java.util.concurrent.TimeoutException;
        boolean broker = error instanceof ApiException && !timeout && Errors.forException(error) != Errors.UNKNOWN_SERVER_ERROR;
        out.put("kind", timeout ? "timeout" : broker ? "broker" : "local");
        if (broker) out.put("code", Errors.forException(error).code());
        else out.putNull("code");
        if (error instanceof KafkaException) out.put("retriable", error instanceof RetriableException);
        else out.putNull("retriable");
        out.put("message", error.getClass().getName() + ": " + error.getMessage());
        if (record == null) out.putNull("record");
        else out.put("record", record);
        return answer;
    }
}
