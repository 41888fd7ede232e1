/* What method = auto measures before it decides (the rules are in auto.c): one pass over the
 * values (with the numerical symmetry test of the symmetric direct backends), breadth-first
 * sweeps of the graph of A, and the factorization cost of a sampled piece of that graph. Every
 * function is O(n + nnz) or less. Private to libsla. */
#ifndef SLA_SOLVE_AUTO_FACTS_H
#define SLA_SOLVE_AUTO_FACTS_H

#include "solve/backend.h"

/** One pass over the values of every batch element. */
typedef struct sla_value_facts {
    double amax;          /**< max |a_ij| over the batch */
    int symmetric;        /**< numerically symmetric (see sla_auto_value_facts) */
    int posdiag;          /**< every diagonal entry stored and > 0 */
    int msign;            /**< no off-diagonal value > 0 (the sign pattern of an M-matrix) */
    int diagdom;          /**< every row weakly diagonally dominant: a_ii ≥ Σ_{j≠i} |a_ij| */
} sla_value_facts;

/** Fills *f in one O(nnz) pass (a cursor per row pairs each entry with its mirror: no
 *  transpose). A is a valid square matrix. Symmetric means, in every batch element and for every
 *  pair (a missing entry is 0),
 *    |a_ij − a_ji| ≤ rtol·max(|a_ij|, |a_ji|) + eps·max|a|   (max over the batch),
 *  the test of sla_symlower_check with rtol = 1000ε, eps = ε. strict [n] (or NULL) gets 1 where
 *  row i is strictly diagonally dominant (a_ii > Σ_{j≠i} |a_ij|) in every batch element.
 *  @return SLA_OK, SLA_ENOMEM. */
sla_status sla_auto_value_facts(const sla_matrix *A, double rtol, double eps, sla_value_facts *f,
                                unsigned char *strict);

/** Breadth-first sweeps of the graph of A (row i → the columns of row i; the undirected graph
 *  when the pattern is structurally symmetric). */
typedef struct sla_graph_facts {
    int64_t diameter;     /**< max over the components of the pseudo-diameter (the eccentricity
                           *   of the last node reached by a sweep from the component's first
                           *   node: George & Liu's two-sweep estimate, exact on grids), or −1
                           *   when a sweep went past level_limit (the diameter is larger) */
    int64_t components;   /**< connected components swept */
    int strict_everywhere;  /**< every component swept has a row flagged in strict */
} sla_graph_facts;

/** Sweeps every component, stopping as soon as one sweep passes level_limit levels (cost
 *  bounded by the ball of that radius then). strict [n] as from sla_auto_value_facts, or NULL.
 *  @return SLA_OK, SLA_ENOMEM. */
sla_status sla_auto_graph_sweep(const sla_pattern *p, const unsigned char *strict,
                                int64_t level_limit, sla_graph_facts *g);

/** The Cholesky cost of a sampled piece of the graph of A. */
typedef struct sla_sample_facts {
    int64_t n;            /**< nodes in the sample (0: no usable sample) */
    double nnz;           /**< entries of A inside the sample */
    double flops;         /**< AMD's predicted flops of its Cholesky factorization */
    double dimension;     /**< growth dimension d of the ball: |B(r)| ∝ r^d, in [1, 3] */
} sla_sample_facts;

/** The ball of `size` nodes around a node of the first component's interior: a sweep from node 0
 *  until `size` nodes are reached, then a sweep of `size` nodes from the middle node of its last
 *  complete level (so that the ball is not cut by the boundary where node 0 often sits). Its
 *  principal submatrix is analysed by AMD (sla_amd_cost), and its dimension d estimated from
 *  the growth of the ball between radius r/2 and r. s->n = 0 when node 0's component has fewer
 *  than `size` nodes (the graph is not one large mesh: nothing to extrapolate from).
 *  @return SLA_OK, SLA_ENOMEM, SLA_EBACKEND. */
sla_status sla_auto_sample(const sla_pattern *p, int64_t size, sla_sample_facts *s);

#endif
