/*
 * The bus from C without a server: the argument checks, a key file that is not one, a key server id of the
 * wrong length, and a connection nobody accepts (the agent's runtime is started and torn down, under the
 * sanitizers and valgrind). Agents talking over a real nats-server are tested in tests/bus_nats.rs.
 */
#include "check.h"

void test_bus(void) {
  static const char key_file[] =
      "pqkit-bus agent v1\nname c-test\nseed 0707070707070707070707070707070707070707070707070707070707070707\n";
  const uint8_t *key = (const uint8_t *)key_file;
  size_t key_len = sizeof key_file - 1;
  uint8_t ks[16] = {0}, out[16];
  size_t n = 0;
  uint32_t prio = 0;
  char subject[8];
  PqkitBusAgent *agent = NULL;
  PqkitBusSubscription *sub = NULL;

  /* Nothing listens on port 1: the connection is refused and no handle is made. */
  CHECK_STATUS(pqkit_bus_agent_connect("nats://127.0.0.1:1", key, key_len, ks, 16, &agent), PQKIT_STATUS_TRANSPORT);
  CHECK(agent == NULL);
  CHECK(strstr(pqkit_last_error(), "127.0.0.1:1") != NULL);
  CHECK_STATUS(pqkit_bus_agent_connect("nats://127.0.0.1:1", (const uint8_t *)"not a key file", 14, ks, 16, &agent),
               PQKIT_STATUS_INVALID_ENCODING);
  CHECK_STATUS(pqkit_bus_agent_connect("nats://127.0.0.1:1", key, key_len - 3, ks, 16, &agent),
               PQKIT_STATUS_INVALID_ENCODING);
  CHECK_STATUS(pqkit_bus_agent_connect("nats://127.0.0.1:1", key, key_len, ks, 15, &agent), PQKIT_STATUS_INVALID_LENGTH);
  CHECK_STATUS(pqkit_bus_agent_connect(NULL, key, key_len, ks, 16, &agent), PQKIT_STATUS_NULL_POINTER);
  CHECK_STATUS(pqkit_bus_agent_connect("nats://127.0.0.1:1", key, key_len, ks, 16, NULL), PQKIT_STATUS_NULL_POINTER);
  CHECK_STATUS(pqkit_bus_agent_connect_file("nats://127.0.0.1:1", "/nonexistent/agent.key", ks, 16, &agent),
               PQKIT_STATUS_INVALID_PARAMETER);
  CHECK(agent == NULL);

  /* NULL handles are refused; freeing NULL does nothing. */
  CHECK_STATUS(pqkit_bus_agent_id(NULL, out, 16), PQKIT_STATUS_NULL_POINTER);
  CHECK_STATUS(pqkit_bus_agent_publish(NULL, "a", PQKIT_BUS_PRIORITY_NORMAL, NULL, 0), PQKIT_STATUS_NULL_POINTER);
  CHECK_STATUS(pqkit_bus_agent_subscribe(NULL, "a", &sub), PQKIT_STATUS_NULL_POINTER);
  CHECK_STATUS(pqkit_bus_subscription_next(NULL, 0, out, 16, subject, sizeof subject, &n, out, 16, &n, &prio),
               PQKIT_STATUS_NULL_POINTER);
  CHECK_STATUS(pqkit_bus_subscription_reply(NULL, NULL, 0), PQKIT_STATUS_NULL_POINTER);
  CHECK_STATUS(pqkit_bus_agent_request(NULL, "a", NULL, 0, 0, out, 16, &n), PQKIT_STATUS_NULL_POINTER);
  CHECK_STATUS(pqkit_bus_agent_flush(NULL), PQKIT_STATUS_NULL_POINTER);
  CHECK_STATUS(pqkit_bus_agent_declare_durable(NULL, "S", NULL, 0), PQKIT_STATUS_NULL_POINTER);
  pqkit_bus_agent_free(NULL);
  pqkit_bus_subscription_free(NULL);
  CHECK(strcmp(pqkit_status_string(PQKIT_STATUS_UNAUTHORISED), "unauthorised by the bus policy") == 0);
  CHECK(strcmp(pqkit_status_string(PQKIT_STATUS_NO_RESPONDERS), "no responders") == 0);
}
