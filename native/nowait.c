/* The no-wait placement loop of srfabric.tsn.schedulers.nowait.heuristic, in C: the same search, the same answers.
 *
 * Python packs each stream's candidate paths (latency, links, hop starts, windows) into a block of int64 once,
 * when it lists them; this orders the streams as the Python loop does, places them one by one and says, per
 * stream, which candidate it took (or -1) and at what release offset. The Python module is the reference: tests compare the two on random
 * instances.
 *
 * State per directed link: its windows grouped by their stream's period, each group sorted and merged
 * modulo the period, and for each (period, g below it) a search asked about, a view of that group modulo
 * g. Groups and views keep the order they were made in, as the Python dicts do.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "nowait.h"

typedef struct {
	int64_t *begins, *ends; /* sorted, disjoint, half-open */
	int32_t count, capacity;
} spans_t;

typedef struct {
	int64_t period, g; /* g == period: the group itself; g < period: a view of it modulo g */
	int64_t longest;   /* groups only: the longest window of the period */
	spans_t spans;
} table_t;

typedef struct {
	table_t *tables;
	int32_t count, capacity;
} link_t;

typedef struct {
	spans_t *spans;
	int32_t link, table; /* where spans lives */
	int64_t g, delta, window;
} check_t;

/* Everything one call makes comes from one arena, freed in one go at its end: a call makes a few small
 * arrays per link, and malloc/free for each of them cost more than the search. Growing an array takes a
 * new one twice the size; the old one stays in the arena until the call ends. */
typedef struct chunk {
	struct chunk *next;
	size_t used, size;
	max_align_t data[];
} chunk_t;

typedef struct {
	chunk_t *head;
} arena_t;

static void *take(arena_t *arena, size_t bytes)
{
	bytes = (bytes + sizeof(max_align_t) - 1) / sizeof(max_align_t) * sizeof(max_align_t);
	if (!arena->head || arena->head->size - arena->head->used < bytes) {
		size_t size = bytes > 65536 ? bytes : 65536;
		chunk_t *chunk = malloc(sizeof(chunk_t) + size);

		if (!chunk)
			return NULL;
		chunk->next = arena->head;
		chunk->used = 0;
		chunk->size = size;
		arena->head = chunk;
	}
	void *block = (char *)arena->head->data + arena->head->used;

	arena->head->used += bytes;
	return block;
}

static void release(arena_t *arena)
{
	while (arena->head) {
		chunk_t *next = arena->head->next;

		free(arena->head);
		arena->head = next;
	}
}

/* The first index whose value is > x (bisect_right). */
static int32_t after(const int64_t *values, int32_t count, int64_t x)
{
	int32_t low = 0, high = count;

	while (low < high) {
		int32_t middle = low + (high - low) / 2;

		if (values[middle] <= x)
			low = middle + 1;
		else
			high = middle;
	}
	return low;
}

/* The first index whose value is >= x (bisect_left). */
static int32_t from(const int64_t *values, int32_t count, int64_t x)
{
	int32_t low = 0, high = count;

	while (low < high) {
		int32_t middle = low + (high - low) / 2;

		if (values[middle] < x)
			low = middle + 1;
		else
			high = middle;
	}
	return low;
}

static int grow(arena_t *arena, spans_t *spans, int32_t more)
{
	if (spans->count + more <= spans->capacity)
		return 0;
	int32_t capacity = spans->capacity ? spans->capacity * 2 : 8;

	while (capacity < spans->count + more)
		capacity *= 2;
	int64_t *begins = take(arena, sizeof(int64_t) * capacity), *ends = take(arena, sizeof(int64_t) * capacity);

	if (!begins || !ends)
		return -1;
	if (spans->count) {
		memcpy(begins, spans->begins, sizeof(int64_t) * spans->count);
		memcpy(ends, spans->ends, sizeof(int64_t) * spans->count);
	}
	spans->begins = begins;
	spans->ends = ends;
	spans->capacity = capacity;
	return 0;
}

/* Add [begin, end) to the merged spans, joining any it overlaps or touches. */
static int insert_span(arena_t *arena, spans_t *spans, int64_t begin, int64_t end)
{
	int32_t first = from(spans->ends, spans->count, begin);
	int32_t last = after(spans->begins, spans->count, end);

	if (first < last) {
		if (spans->begins[first] < begin)
			begin = spans->begins[first];
		if (spans->ends[last - 1] > end)
			end = spans->ends[last - 1];
		int32_t tail = spans->count - last;

		memmove(spans->begins + first + 1, spans->begins + last, sizeof(int64_t) * tail);
		memmove(spans->ends + first + 1, spans->ends + last, sizeof(int64_t) * tail);
		spans->count -= last - first - 1;
	} else {
		if (grow(arena, spans, 1))
			return -1;
		int32_t tail = spans->count - first;

		memmove(spans->begins + first + 1, spans->begins + first, sizeof(int64_t) * tail);
		memmove(spans->ends + first + 1, spans->ends + first, sizeof(int64_t) * tail);
		spans->count += 1;
	}
	spans->begins[first] = begin;
	spans->ends[first] = end;
	return 0;
}

/* Add a window modulo g, split where it passes g. */
static int insert_window(arena_t *arena, spans_t *spans, int64_t start, int64_t length, int64_t g)
{
	int64_t begin = start % g, end = begin + length;

	if (end > g)
		return insert_span(arena, spans, begin, g) || insert_span(arena, spans, 0, end - g);
	return insert_span(arena, spans, begin, end);
}

static table_t *find(link_t *link, int64_t period, int64_t g)
{
	for (int32_t i = 0; i < link->count; i++)
		if (link->tables[i].period == period && link->tables[i].g == g)
			return &link->tables[i];
	return NULL;
}

static table_t *make(arena_t *arena, link_t *link, int64_t period, int64_t g)
{
	if (link->count == link->capacity) {
		int32_t capacity = link->capacity ? link->capacity * 2 : 4;
		table_t *tables = take(arena, sizeof(table_t) * capacity);

		if (!tables)
			return NULL;
		if (link->count)
			memcpy(tables, link->tables, sizeof(table_t) * link->count);
		link->tables = tables;
		link->capacity = capacity;
	}
	table_t *table = &link->tables[link->count++];

	memset(table, 0, sizeof(*table));
	table->period = period;
	table->g = g;
	return table;
}

/* BusyLink.add: the window goes into its period's group and every view made of that group. Views are
 * looked up by index, not kept as pointers: make() may move the tables. */
static int add(arena_t *arena, link_t *link, int64_t period, int64_t start, int64_t length)
{
	table_t *group = find(link, period, period);

	if (!group && !(group = make(arena, link, period, period)))
		return -1;
	if (length > group->longest)
		group->longest = length;
	if (insert_window(arena, &group->spans, start, length, period))
		return -1;
	for (int32_t i = 0; i < link->count; i++) {
		table_t *view = &link->tables[i];

		if (view->period == period && view->g != period && insert_window(arena, &view->spans, start, length, view->g))
			return -1;
	}
	return 0;
}

/* BusyLink.view: a group's windows modulo g, made once from the group. */
static table_t *view(arena_t *arena, link_t *link, int64_t period, int64_t g)
{
	table_t *found = find(link, period, g);

	if (found)
		return found;
	if (!(found = make(arena, link, period, g)))
		return NULL;
	table_t *group = find(link, period, period); /* after make(): it may have moved the tables */

	for (int32_t i = 0; i < group->spans.count; i++)
		if (insert_window(arena, &found->spans, group->spans.begins[i], group->spans.ends[i] - group->spans.begins[i], g))
			return NULL;
	return found;
}

static int64_t gcd(int64_t a, int64_t b)
{
	while (b) {
		int64_t r = a % b;

		a = b;
		b = r;
	}
	return a;
}

/* earliest_offset: the smallest grid point in [0, latest] free on every check, or -1. */
static int64_t earliest(const check_t *checks, int32_t count, int64_t latest, int64_t grid)
{
	int64_t at = 0;
	int32_t index = 0, free_in_turn = 0;

	while (free_in_turn < count) {
		const check_t *check = &checks[index];
		const spans_t *spans = check->spans;
		int64_t x = (at + check->delta) % check->g, shift;
		int32_t i = after(spans->begins, spans->count, x) - 1;

		if (i >= 0 && spans->ends[i] > x)
			shift = spans->ends[i] - x;
		else if (i + 1 < spans->count && spans->begins[i + 1] < x + check->window)
			shift = spans->ends[i + 1] - x;
		else if (x + check->window > check->g && spans->count && spans->begins[0] < x + check->window - check->g)
			shift = check->g + spans->ends[0] - x;
		else {
			free_in_turn += 1;
			index = index + 1 < count ? index + 1 : 0;
			continue;
		}
		at = (at + shift + grid - 1) / grid * grid;
		if (at > latest)
			return -1;
		free_in_turn = 0;
	}
	return at <= latest ? at : -1;
}

/* One path of a stream's block: [latency, hops, links..., starts..., windows...]. */
typedef struct {
	int64_t latency, hops;
	const int64_t *links, *starts, *windows;
} path_t;

/* Lists the checks of a path (path_checks): one per (link, period group) of the links it crosses.
 * Returns the count, -1 if some link can never be free long enough at some spacing (the path is
 * hopeless), -2 if memory ran out. */
static int32_t list_checks(arena_t *arena, link_t *links, const path_t *path, int64_t period, check_t **checks, int32_t *capacity)
{
	int32_t count = 0;

	for (int64_t h = 0; h < path->hops; h++) {
		link_t *link = &links[path->links[h]];
		int32_t tables = link->count; /* view() below adds tables: walk only those there now */

		for (int32_t t = 0; t < tables; t++) {
			int64_t other = link->tables[t].period;

			if (link->tables[t].g != other)
				continue; /* a view, not a group */
			int64_t g = other == period ? period : gcd(period, other);

			if (link->tables[t].longest + path->windows[h] > g)
				return -1;
			table_t *table = g == other ? &link->tables[t] : view(arena, link, other, g);

			if (!table)
				return -2;
			if (count == *capacity) {
				int32_t grown_to = *capacity ? *capacity * 2 : 64;
				check_t *grown = realloc(*checks, sizeof(check_t) * grown_to);

				if (!grown)
					return -2;
				*checks = grown;
				*capacity = grown_to;
			}
			check_t *check = &(*checks)[count++];

			check->link = (int32_t)path->links[h];
			check->table = (int32_t)(table - link->tables);
			check->g = g;
			check->delta = path->starts[h];
			check->window = path->windows[h];
		}
	}
	/* pointers only now: view() may have moved a link's tables while the checks were listed */
	for (int32_t c = 0; c < count; c++)
		(*checks)[c].spans = &links[(*checks)[c].link].tables[(*checks)[c].table].spans;
	return count;
}

/* Reads the path of a block at `*at`, moving `*at` past it; 0, or -1 if it does not fit in `words`, names
 * a link out of range, or has a latency, start or window outside [0, period] (as no listed path has:
 * a negative window would stall the search, a huge one overflow it). */
static int read_path(const int64_t *block, int64_t words, int64_t *at, int32_t n_links, int64_t period,
		     path_t *path)
{
	if (*at + 2 > words)
		return -1;
	path->latency = block[*at];
	path->hops = block[*at + 1];
	if (path->latency < 0 || path->latency > period || path->hops < 0 || path->hops > (words - *at - 2) / 3)
		return -1;
	path->links = block + *at + 2;
	path->starts = path->links + path->hops;
	path->windows = path->starts + path->hops;
	for (int64_t h = 0; h < path->hops; h++)
		if (path->links[h] < 0 || path->links[h] >= n_links || path->starts[h] < 0 || path->starts[h] > period ||
		    path->windows[h] < 0 || path->windows[h] > period)
			return -1;
	*at += 2 + 3 * path->hops;
	return 0;
}

#define MAX_PERIOD (INT64_C(1) << 50) /* far above any period, far below where the search's sums overflow */

typedef struct {
	int64_t period, size;
	int32_t index;
} rank_t;

/* stream_order: shortest period first, then largest frame, then as given. */
static int placed_before(const void *a, const void *b)
{
	const rank_t *x = a, *y = b;

	if (x->period != y->period)
		return x->period < y->period ? -1 : 1;
	if (x->size != y->size)
		return x->size > y->size ? -1 : 1;
	return (x->index > y->index) - (x->index < y->index);
}

/* The placement loop. Stream s (in the problem's order) has period `periods[s]` (a multiple of `grid`, up to
 * MAX_PERIOD), frame size `sizes[s]` and its candidates at word `block_at[s]` of `blocks` ([paths, path...],
 * see read_path; `words` long in all). The streams are placed in stream_order; each one's chosen candidate
 * (its index among the stream's, or -1) and release offset are written at its own index. Returns 0; -1 if
 * memory ran out, -2 if the input is malformed (nothing is then to be trusted). */
int srfabric_nowait(int32_t n_links, int32_t n_streams, const int64_t *periods, const int64_t *sizes,
		    const int64_t *block_at, const int64_t *blocks, int64_t words, int64_t grid, int32_t *chosen,
		    int64_t *offsets)
{
	arena_t arena = {NULL};
	link_t *links = calloc(n_links > 0 ? n_links : 1, sizeof(link_t));
	rank_t *order = malloc(sizeof(rank_t) * (n_streams > 0 ? n_streams : 1));
	check_t *checks = NULL;
	int32_t capacity = 0, status = 0;

	if (!links || !order) {
		free(links);
		free(order);
		return -1;
	}
	for (int32_t s = 0; s < n_streams; s++) {
		chosen[s] = -1;
		offsets[s] = 0;
		order[s] = (rank_t){periods[s], sizes[s], s};
		if (periods[s] < 1 || periods[s] > MAX_PERIOD || grid < 1 || periods[s] % grid || block_at[s] < 0 ||
		    block_at[s] >= words)
			status = -2;
	}
	if (!status && n_streams > 1)
		qsort(order, n_streams, sizeof(rank_t), placed_before);
	for (int32_t o = 0; o < n_streams && !status; o++) {
		int32_t s = order[o].index;
		int64_t period = periods[s], at = block_at[s], paths = blocks[at++];

		if (paths < 0) {
			status = -2;
			break;
		}
		for (int64_t p = 0; p < paths && !status; p++) {
			path_t path;

			if (read_path(blocks, words, &at, n_links, period, &path)) {
				status = -2;
				break;
			}
			if (chosen[s] >= 0)
				continue; /* placed on an earlier candidate: only read past this one */
			int32_t count = list_checks(&arena, links, &path, period, &checks, &capacity);

			if (count == -2) {
				status = -1;
				break;
			}
			if (count < 0)
				continue;
			int64_t offset = earliest(checks, count, period - path.latency, grid);

			if (offset < 0)
				continue;
			chosen[s] = (int32_t)p;
			offsets[s] = offset;
			for (int64_t h = 0; h < path.hops && !status; h++)
				if (add(&arena, &links[path.links[h]], period, offset + path.starts[h], path.windows[h]))
					status = -1;
		}
	}
	release(&arena);
	free(links);
	free(order);
	free(checks);
	return status;
}
