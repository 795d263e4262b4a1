/*
 * A librdkafka share consumer (KIP-932) for librdkafka_share.py's mixed run: it reads one topic in one share group
 * beside a Java KafkaShareConsumer, in explicit acknowledgement mode, acknowledging every record by itself with
 * rd_kafka_share_acknowledge_type(): a value v with v % 10 == 7 is RELEASEd on its first delivery (so it comes back,
 * to either consumer), every other delivery ACCEPTed; rd_kafka_share_commit_sync() after each batch.
 *
 * Prints "READY" once subscribed and polling (and creates the file `ready`), then per record after the commit that
 * carried its acknowledgement "ACKED value ACCEPT|RELEASE OK|<error name> partition offset deliveryCount".
 * Stops when the file `stop` exists or after `seconds`; closes (leaving the group) and prints "CLOSED".
 *
 * Usage: librdkafka_share_consumer bootstrap topic group ready-file stop-file seconds
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "rdkafka.h"

#define MAX_BATCH 10000

struct acked {
        int value, partition, delivery_count;
        int64_t offset;
        const char *type;
};

static void touch(const char *path) {
        FILE *f = fopen(path, "w");
        if (!f) {
                fprintf(stderr, "cannot create %s: %s\n", path, strerror(errno));
                exit(2);
        }
        fclose(f);
}

/* The outcome the commit reported for a partition of the topic, or "NONE" if the answer does not name it. */
static const char *outcome(const rd_kafka_topic_partition_list_t *parts, const char *topic, int partition) {
        int i;
        if (!parts)
                return "NONE";
        for (i = 0; i < parts->cnt; i++)
                if (parts->elems[i].partition == partition && !strcmp(parts->elems[i].topic, topic))
                        return parts->elems[i].err ? rd_kafka_err2name(parts->elems[i].err) : "OK";
        return "NONE";
}

int main(int argc, char **argv) {
        char errstr[512];
        rd_kafka_conf_t *conf;
        rd_kafka_share_t *rkshare;
        rd_kafka_topic_partition_list_t *topics;
        rd_kafka_error_t *error;
        rd_kafka_resp_err_t err;
        static struct acked batch[MAX_BATCH];
        time_t deadline;
        int ready = 0;

        if (argc != 7) {
                fprintf(stderr, "usage: %s bootstrap topic group ready-file stop-file seconds\n", argv[0]);
                return 2;
        }
        setvbuf(stdout, NULL, _IOLBF, 0);
        deadline = time(NULL) + atoi(argv[6]);

        conf = rd_kafka_conf_new();
        if (rd_kafka_conf_set(conf, "bootstrap.servers", argv[1], errstr, sizeof(errstr)) ||
            rd_kafka_conf_set(conf, "group.id", argv[3], errstr, sizeof(errstr)) ||
            rd_kafka_conf_set(conf, "client.id", "librdkafka-share", errstr, sizeof(errstr)) ||
            rd_kafka_conf_set(conf, "broker.address.family", "v4", errstr, sizeof(errstr)) ||
            rd_kafka_conf_set(conf, "share.acknowledgement.mode", "explicit", errstr, sizeof(errstr)) ||
            rd_kafka_conf_set(conf, "max.poll.records", "10", errstr, sizeof(errstr))) {
                fprintf(stderr, "config: %s\n", errstr);
                return 2;
        }
        rkshare = rd_kafka_share_consumer_new(conf, errstr, sizeof(errstr));
        if (!rkshare) {
                fprintf(stderr, "rd_kafka_share_consumer_new: %s\n", errstr);
                return 2;
        }
        topics = rd_kafka_topic_partition_list_new(1);
        rd_kafka_topic_partition_list_add(topics, argv[2], RD_KAFKA_PARTITION_UA);
        if (rd_kafka_share_subscribe(rkshare, topics)) {
                fprintf(stderr, "rd_kafka_share_subscribe failed\n");
                return 2;
        }
        rd_kafka_topic_partition_list_destroy(topics);

        while (access(argv[5], F_OK) != 0 && time(NULL) < deadline) {
                rd_kafka_messages_t *msgs = NULL;
                rd_kafka_topic_partition_list_t *parts = NULL;
                size_t i, n, got = 0;

                error = rd_kafka_share_poll(rkshare, 200, &msgs);
                if (!ready) {
                        touch(argv[4]);
                        printf("READY\n");
                        ready = 1;
                }
                if (error) {
                        printf("POLLERROR %s\n", rd_kafka_error_string(error));
                        rd_kafka_error_destroy(error);
                        rd_kafka_messages_destroy(msgs);
                        continue;
                }
                n = rd_kafka_messages_count(msgs);
                for (i = 0; i < n && got < MAX_BATCH; i++) {
                        rd_kafka_message_t *m = rd_kafka_messages_get(msgs, i);
                        struct acked *a = &batch[got];
                        char value[32] = "";

                        if (m->err) {
                                printf("RECORDERROR %s %d %lld\n", rd_kafka_err2name(m->err), (int)m->partition,
                                       (long long)m->offset);
                                continue;  /* librdkafka has already acknowledged it (REJECT or RELEASE) */
                        }
                        if (m->len > 0 && m->len < sizeof(value))
                                memcpy(value, m->payload, m->len);
                        a->value          = atoi(value);
                        a->partition      = (int)m->partition;
                        a->offset         = m->offset;
                        a->delivery_count = rd_kafka_message_delivery_count(m);
                        a->type           = (a->value % 10 == 7 && a->delivery_count == 1) ? "RELEASE" : "ACCEPT";
                        err = rd_kafka_share_acknowledge_type(
                            rkshare, m, a->type[0] == 'R' ? RD_KAFKA_SHARE_ACKNOWLEDGE_TYPE_RELEASE
                                                          : RD_KAFKA_SHARE_ACKNOWLEDGE_TYPE_ACCEPT);
                        if (err) {
                                printf("ACKERROR %d %s\n", a->value, rd_kafka_err2name(err));
                                continue;
                        }
                        got++;
                }
                rd_kafka_messages_destroy(msgs);
                if (!got)
                        continue;
                error = rd_kafka_share_commit_sync(rkshare, 30000, &parts);
                if (error) {
                        printf("COMMITERROR %s\n", rd_kafka_error_string(error));
                        rd_kafka_error_destroy(error);
                }
                for (i = 0; i < got; i++)
                        printf("ACKED %d %s %s %d %lld %d\n", batch[i].value, batch[i].type,
                               error ? "COMMITERROR" : outcome(parts, argv[2], batch[i].partition),
                               batch[i].partition, (long long)batch[i].offset, batch[i].delivery_count);
                if (parts)
                        rd_kafka_topic_partition_list_destroy(parts);
        }
        error = rd_kafka_share_consumer_close(rkshare);
        if (error) {
                printf("CLOSEERROR %s\n", rd_kafka_error_string(error));
                rd_kafka_error_destroy(error);
        }
        rd_kafka_share_destroy(rkshare);
        printf("CLOSED\n");
        return 0;
}
