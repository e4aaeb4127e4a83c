/* srfabric's Python module `_nowait`: one function, place(), around the C placement loop (nowait.c).
 *
 * A module, not ctypes: a schedule of a few streams is done in tens of microseconds, and a ctypes call
 * (its argument conversions, libffi) and the arrays it needs cost as much again when the caches are cold.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "nowait.h"

/* place(n_links, grid, periods, sizes, block_at, blocks) -> [(candidate, offset), ...] in the streams' order.
 * The four buffers hold native int64 words (srfabric.tsn.schedulers.nowait.native.pack_problem). Raises MemoryError or
 * ValueError (a malformed input) as the loop returns -1 or -2. */
static PyObject *place(PyObject *self, PyObject *args)
{
	int n_links;
	long long grid;
	Py_buffer periods, sizes, block_at, blocks;
	PyObject *result = NULL;
	int32_t *chosen = NULL;
	int64_t *offsets = NULL;

	(void)self;
	if (!PyArg_ParseTuple(args, "iLy*y*y*y*", &n_links, &grid, &periods, &sizes, &block_at, &blocks))
		return NULL;
	Py_ssize_t streams = periods.len / 8;

	if (periods.len % 8 || sizes.len != periods.len || block_at.len != periods.len || blocks.len % 8 ||
	    streams > INT32_MAX) {
		PyErr_SetString(PyExc_ValueError, "place: periods, sizes and block_at need one int64 per stream, "
						  "blocks whole int64 words");
		goto out;
	}
	chosen = PyMem_Malloc(sizeof(int32_t) * (streams ? streams : 1));
	offsets = PyMem_Malloc(sizeof(int64_t) * (streams ? streams : 1));
	if (!chosen || !offsets) {
		PyErr_NoMemory();
		goto out;
	}
	int status = srfabric_nowait(n_links, (int32_t)streams, periods.buf, sizes.buf, block_at.buf, blocks.buf,
				     blocks.len / 8, grid, chosen, offsets);

	if (status) {
		if (status == -1)
			PyErr_NoMemory();
		else
			PyErr_Format(PyExc_ValueError, "the no-wait placement in C failed (status %d)", status);
		goto out;
	}
	result = PyList_New(streams);
	for (Py_ssize_t s = 0; result && s < streams; s++) {
		PyObject *pair = Py_BuildValue("(iL)", chosen[s], (long long)offsets[s]);

		if (!pair) {
			Py_CLEAR(result);
			break;
		}
		PyList_SET_ITEM(result, s, pair);
	}
out:
	PyMem_Free(chosen);
	PyMem_Free(offsets);
	PyBuffer_Release(&periods);
	PyBuffer_Release(&sizes);
	PyBuffer_Release(&block_at);
	PyBuffer_Release(&blocks);
	return result;
}

static PyMethodDef methods[] = {
	{"place", place, METH_VARARGS, "The no-wait placement loop over a packed problem."},
	{NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_nowait", NULL, -1, methods, NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit__nowait(void)
{
	return PyModule_Create(&module);
}
