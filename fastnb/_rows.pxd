# The plain-C helpers of _rows.h, for fastnb/_kernels.pyx; and, in one place,
# which typed row helper serves a kernel's fused element types.
#
# Every row helper returns 0, or -1 in a FASTNB_DEBUG build when an index it
# would use is out of range (the kernels raise IndexError for it).

from cython cimport floating
from libc.stdint cimport int32_t, int64_t

# NumPy's intp (the dtype of labels, positions and offsets) is C's ssize_t on
# every platform NumPy supports: declared so, the kernels need no NumPy
# header, and build against Python's limited C API.
ctypedef Py_ssize_t intp_t

# Index type of sparse matrices (scipy's indices and indptr).
ctypedef fused index_t:
    int32_t
    int64_t

# Element type of category codes.
ctypedef fused code_t:
    int32_t
    int64_t
    float
    double


cdef extern from "_rows.h":
    enum: FASTNB_BLOCK
    enum: FASTNB_KDE_BLOCK

    int fastnb_openmp_enabled() noexcept nogil
    int fastnb_omp_max_threads() noexcept nogil
    const char *fastnb_openmp_runtime() noexcept nogil
    int fastnb_debug_build() noexcept nogil
    int fastnb_cpu_runs_avx2() noexcept nogil
    int fastnb_cpu_runs_avx512() noexcept nogil
    int fastnb_cpu_runs_sve() noexcept nogil

    void fastnb_prefetch(const void* p, Py_ssize_t n_bytes) noexcept nogil
    double fastnb_counted(double v, double threshold, bint binarize) noexcept nogil
    bint fastnb_refused(double x, bint non_negative, bint allow_nan) noexcept nogil
    bint fastnb_row_refused_double(
        const double* x, Py_ssize_t stride, Py_ssize_t n, int non_negative,
        int allow_nan,
    ) noexcept nogil
    bint fastnb_row_refused_float(
        const float* x, Py_ssize_t stride, Py_ssize_t n, int non_negative,
        int allow_nan,
    ) noexcept nogil

    int fastnb_discrete_csr_row_f64_i32(
        const double* data, const int32_t* indices, Py_ssize_t start,
        Py_ssize_t stop, Py_ssize_t nnz, const double* table, Py_ssize_t n_rows,
        Py_ssize_t n_padded, double threshold, int binarize, int non_negative,
        int allow_nan, const double* missing, double* scores,
    ) noexcept nogil
    int fastnb_discrete_csr_row_f64_i64(
        const double* data, const int64_t* indices, Py_ssize_t start,
        Py_ssize_t stop, Py_ssize_t nnz, const double* table, Py_ssize_t n_rows,
        Py_ssize_t n_padded, double threshold, int binarize, int non_negative,
        int allow_nan, const double* missing, double* scores,
    ) noexcept nogil
    int fastnb_discrete_csr_row_f32_i32(
        const float* data, const int32_t* indices, Py_ssize_t start,
        Py_ssize_t stop, Py_ssize_t nnz, const double* table, Py_ssize_t n_rows,
        Py_ssize_t n_padded, double threshold, int binarize, int non_negative,
        int allow_nan, const double* missing, double* scores,
    ) noexcept nogil
    int fastnb_discrete_csr_row_f32_i64(
        const float* data, const int64_t* indices, Py_ssize_t start,
        Py_ssize_t stop, Py_ssize_t nnz, const double* table, Py_ssize_t n_rows,
        Py_ssize_t n_padded, double threshold, int binarize, int non_negative,
        int allow_nan, const double* missing, double* scores,
    ) noexcept nogil

    int fastnb_discrete_dense_row_f64(
        const double* x, Py_ssize_t x_stride, Py_ssize_t n_features,
        const double* table, Py_ssize_t n_rows, Py_ssize_t n_padded,
        double threshold, int binarize, int non_negative, int allow_nan,
        const double* missing, double* scores,
    ) noexcept nogil
    int fastnb_discrete_dense_row_f32(
        const float* x, Py_ssize_t x_stride, Py_ssize_t n_features,
        const double* table, Py_ssize_t n_rows, Py_ssize_t n_padded,
        double threshold, int binarize, int non_negative, int allow_nan,
        const double* missing, double* scores,
    ) noexcept nogil

    int fastnb_gaussian_dense_row_f64(
        const double* x, Py_ssize_t x_stride, Py_ssize_t n_features,
        const double* theta, const double* inv_var, const double* log_var,
        Py_ssize_t n_rows, Py_ssize_t n_padded, double* scores,
    ) noexcept nogil
    int fastnb_gaussian_dense_row_f32(
        const float* x, Py_ssize_t x_stride, Py_ssize_t n_features,
        const double* theta, const double* inv_var, const double* log_var,
        Py_ssize_t n_rows, Py_ssize_t n_padded, double* scores,
    ) noexcept nogil
    int fastnb_gaussian_dense_missing_row_f64(
        const double* x, Py_ssize_t x_stride, Py_ssize_t n_features,
        const double* theta, const double* inv_var, const double* log_var,
        Py_ssize_t n_rows, Py_ssize_t n_padded, double* scores,
    ) noexcept nogil
    int fastnb_gaussian_dense_missing_row_f32(
        const float* x, Py_ssize_t x_stride, Py_ssize_t n_features,
        const double* theta, const double* inv_var, const double* log_var,
        Py_ssize_t n_rows, Py_ssize_t n_padded, double* scores,
    ) noexcept nogil

    int fastnb_kde_dense_row_f64(
        const double* x, Py_ssize_t x_stride, Py_ssize_t n_features,
        const float* table, Py_ssize_t n_points_max, const double* origin,
        const double* inv_step, const intp_t* n_points, const double* tails,
        Py_ssize_t n_rows, Py_ssize_t n_padded, double* scores,
    ) noexcept nogil
    int fastnb_kde_dense_row_f32(
        const float* x, Py_ssize_t x_stride, Py_ssize_t n_features,
        const float* table, Py_ssize_t n_points_max, const double* origin,
        const double* inv_step, const intp_t* n_points, const double* tails,
        Py_ssize_t n_rows, Py_ssize_t n_padded, double* scores,
    ) noexcept nogil
    int fastnb_kde_dense_missing_row_f64(
        const double* x, Py_ssize_t x_stride, Py_ssize_t n_features,
        const float* table, Py_ssize_t n_points_max, const double* origin,
        const double* inv_step, const intp_t* n_points, const double* tails,
        Py_ssize_t n_rows, Py_ssize_t n_padded, double* scores,
    ) noexcept nogil
    int fastnb_kde_dense_missing_row_f32(
        const float* x, Py_ssize_t x_stride, Py_ssize_t n_features,
        const float* table, Py_ssize_t n_points_max, const double* origin,
        const double* inv_step, const intp_t* n_points, const double* tails,
        Py_ssize_t n_rows, Py_ssize_t n_padded, double* scores,
    ) noexcept nogil

    int fastnb_gaussian_csr_row_f64_i32(
        const double* data, const int32_t* indices, Py_ssize_t start,
        Py_ssize_t stop, Py_ssize_t nnz, const double* table,
        const double* log_var, Py_ssize_t n_rows, Py_ssize_t n_padded,
        double* scores,
    ) noexcept nogil
    int fastnb_gaussian_csr_row_f64_i64(
        const double* data, const int64_t* indices, Py_ssize_t start,
        Py_ssize_t stop, Py_ssize_t nnz, const double* table,
        const double* log_var, Py_ssize_t n_rows, Py_ssize_t n_padded,
        double* scores,
    ) noexcept nogil
    int fastnb_gaussian_csr_row_f32_i32(
        const float* data, const int32_t* indices, Py_ssize_t start,
        Py_ssize_t stop, Py_ssize_t nnz, const double* table,
        const double* log_var, Py_ssize_t n_rows, Py_ssize_t n_padded,
        double* scores,
    ) noexcept nogil
    int fastnb_gaussian_csr_row_f32_i64(
        const float* data, const int64_t* indices, Py_ssize_t start,
        Py_ssize_t stop, Py_ssize_t nnz, const double* table,
        const double* log_var, Py_ssize_t n_rows, Py_ssize_t n_padded,
        double* scores,
    ) noexcept nogil
    int fastnb_gaussian_csr_missing_row_f64_i32(
        const double* data, const int32_t* indices, Py_ssize_t start,
        Py_ssize_t stop, Py_ssize_t nnz, const double* table,
        const double* log_var, Py_ssize_t n_rows, Py_ssize_t n_padded,
        double* scores,
    ) noexcept nogil
    int fastnb_gaussian_csr_missing_row_f64_i64(
        const double* data, const int64_t* indices, Py_ssize_t start,
        Py_ssize_t stop, Py_ssize_t nnz, const double* table,
        const double* log_var, Py_ssize_t n_rows, Py_ssize_t n_padded,
        double* scores,
    ) noexcept nogil
    int fastnb_gaussian_csr_missing_row_f32_i32(
        const float* data, const int32_t* indices, Py_ssize_t start,
        Py_ssize_t stop, Py_ssize_t nnz, const double* table,
        const double* log_var, Py_ssize_t n_rows, Py_ssize_t n_padded,
        double* scores,
    ) noexcept nogil
    int fastnb_gaussian_csr_missing_row_f32_i64(
        const float* data, const int64_t* indices, Py_ssize_t start,
        Py_ssize_t stop, Py_ssize_t nnz, const double* table,
        const double* log_var, Py_ssize_t n_rows, Py_ssize_t n_padded,
        double* scores,
    ) noexcept nogil

    int fastnb_whole(double v) noexcept nogil
    void fastnb_zero(double* p, Py_ssize_t n) noexcept nogil
    void fastnb_exp_less(
        double* scores, Py_ssize_t n, Py_ssize_t room, double top
    ) noexcept nogil

    # The categorical row helpers also return 1 at a code that is not a whole
    # number >= 0; the check and count helpers return a code's position.
    int fastnb_categorical_dense_row_i32(
        const int32_t* x, Py_ssize_t x_stride, Py_ssize_t n_features,
        const intp_t* offsets, Py_ssize_t n_offsets, const double* table,
        Py_ssize_t n_rows, Py_ssize_t n_padded, double* scores,
    ) noexcept nogil
    int fastnb_categorical_dense_row_i64(
        const int64_t* x, Py_ssize_t x_stride, Py_ssize_t n_features,
        const intp_t* offsets, Py_ssize_t n_offsets, const double* table,
        Py_ssize_t n_rows, Py_ssize_t n_padded, double* scores,
    ) noexcept nogil
    int fastnb_categorical_dense_row_f32(
        const float* x, Py_ssize_t x_stride, Py_ssize_t n_features,
        const intp_t* offsets, Py_ssize_t n_offsets, const double* table,
        Py_ssize_t n_rows, Py_ssize_t n_padded, double* scores,
    ) noexcept nogil
    int fastnb_categorical_dense_row_missing_f32(
        const float* x, Py_ssize_t x_stride, Py_ssize_t n_features,
        const intp_t* offsets, Py_ssize_t n_offsets, const double* table,
        Py_ssize_t n_rows, Py_ssize_t n_padded, double* scores,
    ) noexcept nogil
    int fastnb_categorical_dense_row_f64(
        const double* x, Py_ssize_t x_stride, Py_ssize_t n_features,
        const intp_t* offsets, Py_ssize_t n_offsets, const double* table,
        Py_ssize_t n_rows, Py_ssize_t n_padded, double* scores,
    ) noexcept nogil
    int fastnb_categorical_dense_row_missing_f64(
        const double* x, Py_ssize_t x_stride, Py_ssize_t n_features,
        const intp_t* offsets, Py_ssize_t n_offsets, const double* table,
        Py_ssize_t n_rows, Py_ssize_t n_padded, double* scores,
    ) noexcept nogil

    int fastnb_categorical_csr_row_i32_i32(
        const int32_t* data, const int32_t* indices, Py_ssize_t start, Py_ssize_t stop,
        Py_ssize_t nnz, Py_ssize_t n_features, const intp_t* offsets,
        Py_ssize_t n_offsets, const double* table, Py_ssize_t n_rows,
        Py_ssize_t n_padded, bint every_feature, double* scores,
    ) noexcept nogil
    int fastnb_categorical_csr_row_i32_i64(
        const int32_t* data, const int64_t* indices, Py_ssize_t start, Py_ssize_t stop,
        Py_ssize_t nnz, Py_ssize_t n_features, const intp_t* offsets,
        Py_ssize_t n_offsets, const double* table, Py_ssize_t n_rows,
        Py_ssize_t n_padded, bint every_feature, double* scores,
    ) noexcept nogil
    int fastnb_categorical_csr_row_i64_i32(
        const int64_t* data, const int32_t* indices, Py_ssize_t start, Py_ssize_t stop,
        Py_ssize_t nnz, Py_ssize_t n_features, const intp_t* offsets,
        Py_ssize_t n_offsets, const double* table, Py_ssize_t n_rows,
        Py_ssize_t n_padded, bint every_feature, double* scores,
    ) noexcept nogil
    int fastnb_categorical_csr_row_i64_i64(
        const int64_t* data, const int64_t* indices, Py_ssize_t start, Py_ssize_t stop,
        Py_ssize_t nnz, Py_ssize_t n_features, const intp_t* offsets,
        Py_ssize_t n_offsets, const double* table, Py_ssize_t n_rows,
        Py_ssize_t n_padded, bint every_feature, double* scores,
    ) noexcept nogil
    int fastnb_categorical_csr_row_f32_i32(
        const float* data, const int32_t* indices, Py_ssize_t start, Py_ssize_t stop,
        Py_ssize_t nnz, Py_ssize_t n_features, const intp_t* offsets,
        Py_ssize_t n_offsets, const double* table, Py_ssize_t n_rows,
        Py_ssize_t n_padded, bint every_feature, double* scores,
    ) noexcept nogil
    int fastnb_categorical_csr_row_missing_f32_i32(
        const float* data, const int32_t* indices, Py_ssize_t start, Py_ssize_t stop,
        Py_ssize_t nnz, Py_ssize_t n_features, const intp_t* offsets,
        Py_ssize_t n_offsets, const double* table, Py_ssize_t n_rows,
        Py_ssize_t n_padded, bint every_feature, double* scores,
    ) noexcept nogil
    int fastnb_categorical_csr_row_f32_i64(
        const float* data, const int64_t* indices, Py_ssize_t start, Py_ssize_t stop,
        Py_ssize_t nnz, Py_ssize_t n_features, const intp_t* offsets,
        Py_ssize_t n_offsets, const double* table, Py_ssize_t n_rows,
        Py_ssize_t n_padded, bint every_feature, double* scores,
    ) noexcept nogil
    int fastnb_categorical_csr_row_missing_f32_i64(
        const float* data, const int64_t* indices, Py_ssize_t start, Py_ssize_t stop,
        Py_ssize_t nnz, Py_ssize_t n_features, const intp_t* offsets,
        Py_ssize_t n_offsets, const double* table, Py_ssize_t n_rows,
        Py_ssize_t n_padded, bint every_feature, double* scores,
    ) noexcept nogil
    int fastnb_categorical_csr_row_f64_i32(
        const double* data, const int32_t* indices, Py_ssize_t start, Py_ssize_t stop,
        Py_ssize_t nnz, Py_ssize_t n_features, const intp_t* offsets,
        Py_ssize_t n_offsets, const double* table, Py_ssize_t n_rows,
        Py_ssize_t n_padded, bint every_feature, double* scores,
    ) noexcept nogil
    int fastnb_categorical_csr_row_missing_f64_i32(
        const double* data, const int32_t* indices, Py_ssize_t start, Py_ssize_t stop,
        Py_ssize_t nnz, Py_ssize_t n_features, const intp_t* offsets,
        Py_ssize_t n_offsets, const double* table, Py_ssize_t n_rows,
        Py_ssize_t n_padded, bint every_feature, double* scores,
    ) noexcept nogil
    int fastnb_categorical_csr_row_f64_i64(
        const double* data, const int64_t* indices, Py_ssize_t start, Py_ssize_t stop,
        Py_ssize_t nnz, Py_ssize_t n_features, const intp_t* offsets,
        Py_ssize_t n_offsets, const double* table, Py_ssize_t n_rows,
        Py_ssize_t n_padded, bint every_feature, double* scores,
    ) noexcept nogil
    int fastnb_categorical_csr_row_missing_f64_i64(
        const double* data, const int64_t* indices, Py_ssize_t start, Py_ssize_t stop,
        Py_ssize_t nnz, Py_ssize_t n_features, const intp_t* offsets,
        Py_ssize_t n_offsets, const double* table, Py_ssize_t n_rows,
        Py_ssize_t n_padded, bint every_feature, double* scores,
    ) noexcept nogil

    Py_ssize_t fastnb_categorical_count_rows_i32(
        const int32_t* x, Py_ssize_t row_stride, Py_ssize_t x_stride, Py_ssize_t n_rows,
        Py_ssize_t n_features, Py_ssize_t j0, const intp_t* y, const double* w,
        const int32_t* highest, const intp_t* layout, Py_ssize_t n_classes,
        double* table, Py_ssize_t n_table,
    ) noexcept nogil
    Py_ssize_t fastnb_categorical_count_rows_i64(
        const int64_t* x, Py_ssize_t row_stride, Py_ssize_t x_stride, Py_ssize_t n_rows,
        Py_ssize_t n_features, Py_ssize_t j0, const intp_t* y, const double* w,
        const int64_t* highest, const intp_t* layout, Py_ssize_t n_classes,
        double* table, Py_ssize_t n_table,
    ) noexcept nogil
    Py_ssize_t fastnb_categorical_count_rows_f32(
        const float* x, Py_ssize_t row_stride, Py_ssize_t x_stride, Py_ssize_t n_rows,
        Py_ssize_t n_features, Py_ssize_t j0, const intp_t* y, const double* w,
        const float* highest, const intp_t* layout, Py_ssize_t n_classes,
        double* table, Py_ssize_t n_table,
    ) noexcept nogil
    Py_ssize_t fastnb_categorical_count_rows_missing_f32(
        const float* x, Py_ssize_t row_stride, Py_ssize_t x_stride, Py_ssize_t n_rows,
        Py_ssize_t n_features, Py_ssize_t j0, const intp_t* y, const double* w,
        const float* highest, const intp_t* layout, Py_ssize_t n_classes,
        double* table, Py_ssize_t n_table,
    ) noexcept nogil
    Py_ssize_t fastnb_categorical_count_rows_f64(
        const double* x, Py_ssize_t row_stride, Py_ssize_t x_stride, Py_ssize_t n_rows,
        Py_ssize_t n_features, Py_ssize_t j0, const intp_t* y, const double* w,
        const double* highest, const intp_t* layout, Py_ssize_t n_classes,
        double* table, Py_ssize_t n_table,
    ) noexcept nogil
    Py_ssize_t fastnb_categorical_count_rows_missing_f64(
        const double* x, Py_ssize_t row_stride, Py_ssize_t x_stride, Py_ssize_t n_rows,
        Py_ssize_t n_features, Py_ssize_t j0, const intp_t* y, const double* w,
        const double* highest, const intp_t* layout, Py_ssize_t n_classes,
        double* table, Py_ssize_t n_table,
    ) noexcept nogil
    Py_ssize_t fastnb_categorical_check_rows_i32(
        const int32_t* x, Py_ssize_t row_stride, Py_ssize_t x_stride,
        Py_ssize_t n_rows, Py_ssize_t n_features, int64_t limit, int32_t* highest,
    ) noexcept nogil
    Py_ssize_t fastnb_categorical_check_rows_i64(
        const int64_t* x, Py_ssize_t row_stride, Py_ssize_t x_stride,
        Py_ssize_t n_rows, Py_ssize_t n_features, int64_t limit, int64_t* highest,
    ) noexcept nogil
    Py_ssize_t fastnb_categorical_check_rows_f32(
        const float* x, Py_ssize_t row_stride, Py_ssize_t x_stride,
        Py_ssize_t n_rows, Py_ssize_t n_features, int64_t limit, float* highest,
    ) noexcept nogil
    Py_ssize_t fastnb_categorical_check_rows_missing_f32(
        const float* x, Py_ssize_t row_stride, Py_ssize_t x_stride,
        Py_ssize_t n_rows, Py_ssize_t n_features, int64_t limit, float* highest,
    ) noexcept nogil
    Py_ssize_t fastnb_categorical_check_rows_f64(
        const double* x, Py_ssize_t row_stride, Py_ssize_t x_stride,
        Py_ssize_t n_rows, Py_ssize_t n_features, int64_t limit, double* highest,
    ) noexcept nogil
    Py_ssize_t fastnb_categorical_check_rows_missing_f64(
        const double* x, Py_ssize_t row_stride, Py_ssize_t x_stride,
        Py_ssize_t n_rows, Py_ssize_t n_features, int64_t limit, double* highest,
    ) noexcept nogil


# The row helper for each specialisation: the branches are resolved when
# Cython compiles each specialisation, leaving one direct call.

cdef inline int discrete_csr_row(
    const floating* data, const index_t* indices, Py_ssize_t start,
    Py_ssize_t stop, Py_ssize_t nnz, const double* table, Py_ssize_t n_rows,
    Py_ssize_t n_padded, double threshold, bint binarize, bint non_negative,
    bint allow_nan, const double* missing, double* scores,
) noexcept nogil:
    if floating is double and index_t is int32_t:
        return fastnb_discrete_csr_row_f64_i32(
            data, indices, start, stop, nnz, table, n_rows, n_padded, threshold,
            binarize, non_negative, allow_nan, missing, scores,
        )
    elif floating is double:
        return fastnb_discrete_csr_row_f64_i64(
            data, indices, start, stop, nnz, table, n_rows, n_padded, threshold,
            binarize, non_negative, allow_nan, missing, scores,
        )
    elif index_t is int32_t:
        return fastnb_discrete_csr_row_f32_i32(
            data, indices, start, stop, nnz, table, n_rows, n_padded, threshold,
            binarize, non_negative, allow_nan, missing, scores,
        )
    else:
        return fastnb_discrete_csr_row_f32_i64(
            data, indices, start, stop, nnz, table, n_rows, n_padded, threshold,
            binarize, non_negative, allow_nan, missing, scores,
        )


cdef inline int discrete_dense_row(
    const floating* x, Py_ssize_t x_stride, Py_ssize_t n_features,
    const double* table, Py_ssize_t n_rows, Py_ssize_t n_padded,
    double threshold, bint binarize, bint non_negative, bint allow_nan,
    const double* missing, double* scores,
) noexcept nogil:
    if floating is double:
        return fastnb_discrete_dense_row_f64(
            x, x_stride, n_features, table, n_rows, n_padded, threshold,
            binarize, non_negative, allow_nan, missing, scores,
        )
    else:
        return fastnb_discrete_dense_row_f32(
            x, x_stride, n_features, table, n_rows, n_padded, threshold,
            binarize, non_negative, allow_nan, missing, scores,
        )


cdef inline int gaussian_dense_row(
    const floating* x, Py_ssize_t x_stride, Py_ssize_t n_features,
    const double* theta, const double* inv_var, const double* log_var,
    Py_ssize_t n_rows, Py_ssize_t n_padded, bint missing, double* scores,
) noexcept nogil:
    # missing: the helper of a model with missing="ignore" (see _rows.h).
    if floating is double and missing:
        return fastnb_gaussian_dense_missing_row_f64(
            x, x_stride, n_features, theta, inv_var, log_var, n_rows, n_padded,
            scores,
        )
    elif floating is double:
        return fastnb_gaussian_dense_row_f64(
            x, x_stride, n_features, theta, inv_var, log_var, n_rows, n_padded,
            scores,
        )
    elif missing:
        return fastnb_gaussian_dense_missing_row_f32(
            x, x_stride, n_features, theta, inv_var, log_var, n_rows, n_padded,
            scores,
        )
    else:
        return fastnb_gaussian_dense_row_f32(
            x, x_stride, n_features, theta, inv_var, log_var, n_rows, n_padded,
            scores,
        )


cdef inline int gaussian_csr_row(
    const floating* data, const index_t* indices, Py_ssize_t start,
    Py_ssize_t stop, Py_ssize_t nnz, const double* table,
    const double* log_var, Py_ssize_t n_rows, Py_ssize_t n_padded,
    bint missing, double* scores,
) noexcept nogil:
    # missing: as for gaussian_dense_row.
    if floating is double and index_t is int32_t and missing:
        return fastnb_gaussian_csr_missing_row_f64_i32(
            data, indices, start, stop, nnz, table, log_var, n_rows, n_padded,
            scores,
        )
    elif floating is double and index_t is int32_t:
        return fastnb_gaussian_csr_row_f64_i32(
            data, indices, start, stop, nnz, table, log_var, n_rows, n_padded,
            scores,
        )
    elif floating is double and missing:
        return fastnb_gaussian_csr_missing_row_f64_i64(
            data, indices, start, stop, nnz, table, log_var, n_rows, n_padded,
            scores,
        )
    elif floating is double:
        return fastnb_gaussian_csr_row_f64_i64(
            data, indices, start, stop, nnz, table, log_var, n_rows, n_padded,
            scores,
        )
    elif index_t is int32_t and missing:
        return fastnb_gaussian_csr_missing_row_f32_i32(
            data, indices, start, stop, nnz, table, log_var, n_rows, n_padded,
            scores,
        )
    elif index_t is int32_t:
        return fastnb_gaussian_csr_row_f32_i32(
            data, indices, start, stop, nnz, table, log_var, n_rows, n_padded,
            scores,
        )
    elif missing:
        return fastnb_gaussian_csr_missing_row_f32_i64(
            data, indices, start, stop, nnz, table, log_var, n_rows, n_padded,
            scores,
        )
    else:
        return fastnb_gaussian_csr_row_f32_i64(
            data, indices, start, stop, nnz, table, log_var, n_rows, n_padded,
            scores,
        )


cdef inline int categorical_dense_row(
    const code_t* x, Py_ssize_t x_stride, Py_ssize_t n_features,
    const intp_t* offsets, Py_ssize_t n_offsets, const double* table,
    Py_ssize_t n_rows, Py_ssize_t n_padded, bint missing, double* scores,
) noexcept nogil:
    # missing: the helper that takes NaN for a missing value (missing="ignore");
    # integer codes hold no NaN, and have one helper.
    if code_t is int32_t:
        return fastnb_categorical_dense_row_i32(
            x, x_stride, n_features, offsets, n_offsets, table, n_rows, n_padded,
            scores,
        )
    elif code_t is int64_t:
        return fastnb_categorical_dense_row_i64(
            x, x_stride, n_features, offsets, n_offsets, table, n_rows, n_padded,
            scores,
        )
    elif code_t is float:
        if missing:
            return fastnb_categorical_dense_row_missing_f32(
                x, x_stride, n_features, offsets, n_offsets, table, n_rows,
                n_padded, scores,
            )
        return fastnb_categorical_dense_row_f32(
            x, x_stride, n_features, offsets, n_offsets, table, n_rows, n_padded,
            scores,
        )
    else:
        if missing:
            return fastnb_categorical_dense_row_missing_f64(
                x, x_stride, n_features, offsets, n_offsets, table, n_rows,
                n_padded, scores,
            )
        return fastnb_categorical_dense_row_f64(
            x, x_stride, n_features, offsets, n_offsets, table, n_rows, n_padded,
            scores,
        )


cdef inline int categorical_csr_row(
    const code_t* data, const index_t* indices, Py_ssize_t start, Py_ssize_t stop,
    Py_ssize_t nnz, Py_ssize_t n_features, const intp_t* offsets,
    Py_ssize_t n_offsets, const double* table, Py_ssize_t n_rows,
    Py_ssize_t n_padded, bint every_feature, bint missing, double* scores,
) noexcept nogil:
    if code_t is int32_t and index_t is int32_t:
        return fastnb_categorical_csr_row_i32_i32(
            data, indices, start, stop, nnz, n_features, offsets, n_offsets, table,
            n_rows, n_padded, every_feature, scores,
        )
    elif code_t is int32_t and index_t is int64_t:
        return fastnb_categorical_csr_row_i32_i64(
            data, indices, start, stop, nnz, n_features, offsets, n_offsets, table,
            n_rows, n_padded, every_feature, scores,
        )
    elif code_t is int64_t and index_t is int32_t:
        return fastnb_categorical_csr_row_i64_i32(
            data, indices, start, stop, nnz, n_features, offsets, n_offsets, table,
            n_rows, n_padded, every_feature, scores,
        )
    elif code_t is int64_t and index_t is int64_t:
        return fastnb_categorical_csr_row_i64_i64(
            data, indices, start, stop, nnz, n_features, offsets, n_offsets, table,
            n_rows, n_padded, every_feature, scores,
        )
    elif code_t is float and index_t is int32_t:
        if missing:
            return fastnb_categorical_csr_row_missing_f32_i32(
                data, indices, start, stop, nnz, n_features, offsets, n_offsets,
                table, n_rows, n_padded, every_feature, scores,
            )
        return fastnb_categorical_csr_row_f32_i32(
            data, indices, start, stop, nnz, n_features, offsets, n_offsets, table,
            n_rows, n_padded, every_feature, scores,
        )
    elif code_t is float and index_t is int64_t:
        if missing:
            return fastnb_categorical_csr_row_missing_f32_i64(
                data, indices, start, stop, nnz, n_features, offsets, n_offsets,
                table, n_rows, n_padded, every_feature, scores,
            )
        return fastnb_categorical_csr_row_f32_i64(
            data, indices, start, stop, nnz, n_features, offsets, n_offsets, table,
            n_rows, n_padded, every_feature, scores,
        )
    elif code_t is double and index_t is int32_t:
        if missing:
            return fastnb_categorical_csr_row_missing_f64_i32(
                data, indices, start, stop, nnz, n_features, offsets, n_offsets,
                table, n_rows, n_padded, every_feature, scores,
            )
        return fastnb_categorical_csr_row_f64_i32(
            data, indices, start, stop, nnz, n_features, offsets, n_offsets, table,
            n_rows, n_padded, every_feature, scores,
        )
    else:
        if missing:
            return fastnb_categorical_csr_row_missing_f64_i64(
                data, indices, start, stop, nnz, n_features, offsets, n_offsets,
                table, n_rows, n_padded, every_feature, scores,
            )
        return fastnb_categorical_csr_row_f64_i64(
            data, indices, start, stop, nnz, n_features, offsets, n_offsets, table,
            n_rows, n_padded, every_feature, scores,
        )


cdef inline Py_ssize_t categorical_check_rows(
    const code_t* x, Py_ssize_t row_stride, Py_ssize_t x_stride, Py_ssize_t n_rows,
    Py_ssize_t n_features, int64_t limit, bint missing, code_t* highest,
) noexcept nogil:
    if code_t is int32_t:
        return fastnb_categorical_check_rows_i32(
            x, row_stride, x_stride, n_rows, n_features, limit, highest
        )
    elif code_t is int64_t:
        return fastnb_categorical_check_rows_i64(
            x, row_stride, x_stride, n_rows, n_features, limit, highest
        )
    elif code_t is float:
        if missing:
            return fastnb_categorical_check_rows_missing_f32(
                x, row_stride, x_stride, n_rows, n_features, limit, highest
            )
        return fastnb_categorical_check_rows_f32(
            x, row_stride, x_stride, n_rows, n_features, limit, highest
        )
    else:
        if missing:
            return fastnb_categorical_check_rows_missing_f64(
                x, row_stride, x_stride, n_rows, n_features, limit, highest
            )
        return fastnb_categorical_check_rows_f64(
            x, row_stride, x_stride, n_rows, n_features, limit, highest
        )


cdef inline Py_ssize_t categorical_count_rows(
    const code_t* x, Py_ssize_t row_stride, Py_ssize_t x_stride, Py_ssize_t n_rows,
    Py_ssize_t n_features, Py_ssize_t j0, const intp_t* y, const double* w,
    const code_t* highest, const intp_t* layout, Py_ssize_t n_classes,
    double* table, Py_ssize_t n_table, bint missing,
) noexcept nogil:
    if code_t is int32_t:
        return fastnb_categorical_count_rows_i32(
            x, row_stride, x_stride, n_rows, n_features, j0, y, w, highest, layout,
            n_classes, table, n_table,
        )
    elif code_t is int64_t:
        return fastnb_categorical_count_rows_i64(
            x, row_stride, x_stride, n_rows, n_features, j0, y, w, highest, layout,
            n_classes, table, n_table,
        )
    elif code_t is float:
        if missing:
            return fastnb_categorical_count_rows_missing_f32(
                x, row_stride, x_stride, n_rows, n_features, j0, y, w, highest,
                layout, n_classes, table, n_table,
            )
        return fastnb_categorical_count_rows_f32(
            x, row_stride, x_stride, n_rows, n_features, j0, y, w, highest, layout,
            n_classes, table, n_table,
        )
    else:
        if missing:
            return fastnb_categorical_count_rows_missing_f64(
                x, row_stride, x_stride, n_rows, n_features, j0, y, w, highest,
                layout, n_classes, table, n_table,
            )
        return fastnb_categorical_count_rows_f64(
            x, row_stride, x_stride, n_rows, n_features, j0, y, w, highest, layout,
            n_classes, table, n_table,
        )


cdef inline int kde_dense_row(
    const floating* x, Py_ssize_t x_stride, Py_ssize_t n_features,
    const float* table, Py_ssize_t n_points_max, const double* origin,
    const double* inv_step, const intp_t* n_points, const double* tails,
    Py_ssize_t n_rows, Py_ssize_t n_padded, bint missing, double* scores,
) noexcept nogil:
    # missing: the helper of a model with missing="ignore" (see _rows.h).
    if floating is double and missing:
        return fastnb_kde_dense_missing_row_f64(
            x, x_stride, n_features, table, n_points_max, origin, inv_step,
            n_points, tails, n_rows, n_padded, scores,
        )
    elif floating is double:
        return fastnb_kde_dense_row_f64(
            x, x_stride, n_features, table, n_points_max, origin, inv_step,
            n_points, tails, n_rows, n_padded, scores,
        )
    elif missing:
        return fastnb_kde_dense_missing_row_f32(
            x, x_stride, n_features, table, n_points_max, origin, inv_step,
            n_points, tails, n_rows, n_padded, scores,
        )
    else:
        return fastnb_kde_dense_row_f32(
            x, x_stride, n_features, table, n_points_max, origin, inv_step,
            n_points, tails, n_rows, n_padded, scores,
        )
