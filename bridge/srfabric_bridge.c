/* netconfd SIL of a TSN bridge run by srfabric's bridge agent (module srfabric-bridge).
 *
 * The agent owns the ports; this library is its window into netconfd:
 *  - after every commit (and once at start) the running configuration goes to STATE/running.xml, written to a
 *    temporary file and renamed so the agent never reads half of it, and one byte into the FIFO STATE/changed
 *    that the agent waits on (it polls nothing);
 *  - each port's gate-parameter-table gets its state leaves as virtual nodes, answered from the files the agent
 *    keeps in STATE/oper/<interface>/<leaf> (a leaf's value, or a container's XML); current-time is read from
 *    CLOCK_TAI here. A leaf the agent has not written yet is absent from the reply.
 * STATE is the environment variable SRFABRIC_BRIDGE_STATE, set by the agent before it starts netconfd. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <libxml/xmlstring.h>
#include "procdefs.h"
#include "agt.h"
#include "agt_cb.h"
#include "agt_commit_complete.h"
#include "agt_not.h"
#include "agt_not_queue_notification_cb.h"
#include "agt_timer.h"
#include "cfg.h"
#include "getcb.h"
#include "ncx.h"
#include "obj.h"
#include "status.h"
#include "val.h"
#include "val_set_cplxval_obj.h"
#include "val_util.h"

#define IETF_IF "ietf-interfaces"
#define DOT1Q_BRIDGE "ieee802-dot1q-bridge"
#define SCHED_BRIDGE "ieee802-dot1q-sched-bridge"
#define SCHED_BRIDGE_NS "urn:ieee:std:802.1Q:yang:ieee802-dot1q-sched-bridge"
#define STATE_MAX 65536 /* the largest state file: a 1024-entry oper-control-list fits */

static const char *state_dir;

/* The name of the interface whose gate-parameter-table holds ``node``. */
static const char *interface_of(const val_value_t *node)
{
    const val_value_t *table = node->parent;
    const val_value_t *port = table ? table->parent : NULL;
    const val_value_t *interface = port ? port->parent : NULL;
    val_value_t *name = interface ? val_find_child(interface, (const xmlChar *)IETF_IF, (const xmlChar *)"name")
                                  : NULL;
    return name ? (const char *)VAL_STR(name) : NULL;
}

/* The agent's file for one state leaf into ``text``; 0 when it has none (the leaf is then left out). */
static int read_state(const char *interface, const char *leaf, char *text, size_t size)
{
    char path[PATH_MAX];
    if (strchr(interface, '/') || snprintf(path, sizeof path, "%s/oper/%s/%s", state_dir, interface, leaf)
                                      >= (int)sizeof path)
        return 0;
    FILE *file = fopen(path, "r");
    if (!file)
        return 0;
    size_t got = fread(text, 1, size - 1, file);
    int complete = feof(file) && !ferror(file);
    fclose(file);
    text[got] = '\0';
    while (got && (text[got - 1] == '\n' || text[got - 1] == ' '))
        text[--got] = '\0';
    return complete && got > 0;
}

static status_t get_state(ses_cb_t *scb, getcb_mode_t mode, const val_value_t *virval, val_value_t *dstval)
{
    (void)scb;
    (void)mode;
    static char text[STATE_MAX];
    const char *leaf = (const char *)obj_get_name(virval->obj);
    const char *interface = interface_of(virval);
    ((val_value_t *)virval)->cachetime = 0; /* the agent's files change at each switch-over: never cached */
    if (strcmp(leaf, "current-time") == 0) {
        struct timespec now;
        clock_gettime(CLOCK_TAI, &now);
        snprintf(text, sizeof text, "<current-time xmlns=\"%s\"><seconds>%lld</seconds><nanoseconds>%ld"
                 "</nanoseconds></current-time>", SCHED_BRIDGE_NS, (long long)now.tv_sec, now.tv_nsec);
    } else if (!interface || !read_state(interface, leaf, text, sizeof text)) {
        return ERR_NCX_SKIPPED;
    }
    if (obj_is_leaf(virval->obj))
        return val_set_simval_obj(dstval, virval->obj, (const xmlChar *)text);
    return val_set_cplxval_obj(dstval, virval->obj, text);
}

/* Every state child of ``table`` the schema has, as a virtual node answered by get_state. */
static void add_state_nodes(val_value_t *table)
{
    for (obj_template_t *child = obj_first_child(table->obj); child; child = obj_next_child(child)) {
        if (obj_get_config_flag(child) || !(obj_is_leaf(child) || child->objtype == OBJ_TYP_CONTAINER))
            continue;
        val_value_t *have = val_find_child(table, obj_get_mod_name(child), obj_get_name(child));
        if (have && have->getcb == (void *)get_state)
            continue;
        if (have) { /* a copy a rollback brought back, which answers nothing */
            val_remove_child(have);
            val_free_value(have);
        }
        val_value_t *node = val_new_value();
        if (!node)
            return;
        val_init_virtual(node, get_state, child);
        val_add_child(node, table);
    }
}

static void add_state_everywhere(val_value_t *root)
{
    val_value_t *interfaces = val_find_child(root, (const xmlChar *)IETF_IF, (const xmlChar *)"interfaces");
    if (!interfaces)
        return;
    for (val_value_t *interface = val_get_first_child(interfaces); interface;
         interface = val_get_next_child(interface)) {
        val_value_t *port = val_find_child(interface, (const xmlChar *)DOT1Q_BRIDGE, (const xmlChar *)"bridge-port");
        val_value_t *table = port ? val_find_child(port, (const xmlChar *)SCHED_BRIDGE,
                                                   (const xmlChar *)"gate-parameter-table") : NULL;
        if (table)
            add_state_nodes(table);
    }
}

/* Wake the agent: one byte into STATE/changed. No reader yet (the agent reads the file when it starts) or a full
 * pipe (a wake-up is already pending): nothing more to do. */
static void notify_agent(void)
{
    char fifo[PATH_MAX];
    snprintf(fifo, sizeof fifo, "%s/changed", state_dir);
    int fd = open(fifo, O_WRONLY | O_NONBLOCK);
    if (fd < 0)
        return;
    /* The agent gone between open and write would raise SIGPIPE: netconfd must outlive it. */
    struct sigaction ignore = {.sa_handler = SIG_IGN}, previous;
    sigaction(SIGPIPE, &ignore, &previous);
    if (write(fd, "c", 1) < 0 && errno != EAGAIN && errno != EPIPE)
        log_error("\nsrfabric-bridge: cannot wake the agent: %s", strerror(errno));
    sigaction(SIGPIPE, &previous, NULL);
    close(fd);
}

static status_t write_running(val_value_t *root)
{
    status_t res = NO_ERR;
    val_value_t *config = val_clone_config_data(root, &res);
    if (!config)
        return res == NO_ERR ? ERR_INTERNAL_MEM : res;
    xmlChar *text = NULL;
    res = val_make_serialized_string(config, NCX_DISPLAY_MODE_XML, &text);
    val_free_value(config);
    if (res != NO_ERR)
        return res;
    static xmlChar *last;
    if (last && xmlStrEqual(last, text)) {
        free(text);
        return NO_ERR;
    }
    char temporary[PATH_MAX], path[PATH_MAX];
    snprintf(temporary, sizeof temporary, "%s/running.xml.part", state_dir);
    snprintf(path, sizeof path, "%s/running.xml", state_dir);
    FILE *file = fopen(temporary, "w");
    size_t length = strlen((const char *)text);
    int written = file && fwrite(text, 1, length, file) == length;
    written = (file && fclose(file) == 0) && written;
    if (!written || rename(temporary, path) != 0) {
        log_error("\nsrfabric-bridge: cannot write %s: %s", path, strerror(errno));
        free(text);
        return ERR_FIL_WRITE;
    }
    free(last);
    last = text;
    notify_agent();
    return NO_ERR;
}

/* After a commit, a confirmed commit's cancel or timeout, or at start: the agent gets the running config. */
static status_t running_changed(void)
{
    cfg_template_t *running = cfg_get_config_id(NCX_CFGID_RUNNING);
    if (!running || !running->root)
        return ERR_INTERNAL_VAL;
    add_state_everywhere(running->root);
    return write_running(running->root);
}

/* A confirmed commit cancelled or timed out rolls running back without commit-complete; netconfd then sends
 * netconf-confirmed-commit, and the agent hears of the rollback from here. */
static status_t notified(agt_not_msg_t *notification)
{
    if (notification->notobj && strcmp((const char *)obj_get_name(notification->notobj),
                                       "netconf-confirmed-commit") == 0)
        running_changed();
    return NO_ERR;
}

/* And once a second, in case: the running tree is written again when it differs from what the agent last got. */
static int watch_running(uint32 timer_id, void *cookie)
{
    (void)timer_id;
    (void)cookie;
    running_changed();
    return 0;
}

status_t y_srfabric_bridge_init(const xmlChar *modname, const xmlChar *revision)
{
    (void)modname;
    (void)revision;
    state_dir = getenv("SRFABRIC_BRIDGE_STATE");
    if (!state_dir || !*state_dir) {
        log_error("\nsrfabric-bridge: SRFABRIC_BRIDGE_STATE (the agent's state folder) is not set");
        return ERR_NCX_INVALID_VALUE;
    }
    status_t res = agt_not_queue_notification_cb_register((const xmlChar *)"srfabric-bridge", notified);
    return res == NO_ERR ? agt_commit_complete_register((const xmlChar *)"srfabric-bridge", running_changed) : res;
}

status_t y_srfabric_bridge_init2(void)
{
    uint32 timer_id;
    status_t res = agt_timer_create(1, TRUE, watch_running, NULL, &timer_id);
    return res == NO_ERR ? running_changed() : res;
}

void y_srfabric_bridge_cleanup(void)
{
    agt_commit_complete_unregister((const xmlChar *)"srfabric-bridge");
    agt_not_queue_notification_cb_unregister((const xmlChar *)"srfabric-bridge");
}
