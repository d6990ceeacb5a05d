#include "omnilearn/scheduler/max_min_fairness.h"

#include <glpk.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
#include <string>

#include "omnilearn/base/format.h"

namespace omnilearn::scheduler {
namespace {

struct ProblemDeleter {
  void operator()(glp_prob* p) const { glp_delete_prob(p); }
};

Status check_problem(const MaxMinProblem& p) {
  const std::size_t kinds = p.capacity.size();
  if (kinds == 0) return Status::invalid_argument("max-min fairness: no device kinds");
  for (std::size_t k = 0; k < kinds; ++k) {
    if (p.capacity[k] < 1) {
      return Status::invalid_argument("max-min fairness: capacity of kind " + std::to_string(k) + " must be >= 1");
    }
  }
  if (p.workers.size() != p.throughput.size()) {
    return Status::invalid_argument("max-min fairness: workers and throughput list different numbers of jobs");
  }
  for (std::size_t j = 0; j < p.workers.size(); ++j) {
    const std::string job = "max-min fairness: job " + std::to_string(j);
    if (p.workers[j] < 1) return Status::invalid_argument(job + ": workers must be >= 1");
    if (p.throughput[j].size() != kinds) return Status::invalid_argument(job + ": one throughput per kind needed");
    bool open = false;
    for (std::size_t k = 0; k < kinds; ++k) {
      const double t = p.throughput[j][k];
      if (!std::isfinite(t) || t < 0.0) {
        return Status::invalid_argument(job + ": throughput on kind " + std::to_string(k) +
                                        " must be a finite number >= 0, got " + format_g(t));
      }
      open = open || (t > 0.0 && p.workers[j] <= p.capacity[k]);
    }
    if (!open) {
      return Status::invalid_argument(job + ": no kind has both a throughput > 0 and " + std::to_string(p.workers[j]) +
                                      " devices");
    }
  }
  for (std::size_t i = 0; i < p.pairs.size(); ++i) {
    const PackedCombination& c = p.pairs[i];
    const std::string pair = "max-min fairness: pair " + std::to_string(i);
    if (c.a >= p.workers.size() || c.b >= p.workers.size() || c.a == c.b || c.kind >= kinds) {
      return Status::invalid_argument(pair + ": needs two different jobs and a kind of the problem");
    }
    if (p.workers[c.a] != 1 || p.workers[c.b] != 1) {
      return Status::invalid_argument(pair + ": only one-worker jobs share a device");
    }
    if (p.throughput[c.a][c.kind] <= 0.0 || p.throughput[c.b][c.kind] <= 0.0) {
      return Status::invalid_argument(pair + ": both jobs must run on its kind");
    }
    if (!std::isfinite(c.fraction_a) || !std::isfinite(c.fraction_b) || c.fraction_a < 0.0 || c.fraction_b < 0.0) {
      return Status::invalid_argument(pair + ": fractions must be finite numbers >= 0, got " + format_g(c.fraction_a) +
                                      " and " + format_g(c.fraction_b));
    }
  }
  return Status::ok();
}

Status run_simplex(glp_prob* lp, const char* phase) {
  glp_smcp parm;
  glp_init_smcp(&parm);
  parm.msg_lev = GLP_MSG_OFF;
  const int rc = glp_simplex(lp, &parm);
  if (rc != 0) {
    return Status::internal(std::string("max-min fairness: GLPK's simplex failed in the ") + phase + " (code " +
                            std::to_string(rc) + ")");
  }
  if (glp_get_status(lp) != GLP_OPT) {
    return Status::internal(std::string("max-min fairness: GLPK found no optimum in the ") + phase + " (status " +
                            std::to_string(glp_get_status(lp)) + ")");
  }
  return Status::ok();
}

// Each job's ratio per unit of its variables: coef[j][k] = w_j T[j][k] / E_j for x[j][k] (0 on a closed kind), and
// for each packed pair the ratios of its jobs a and b per unit of pair_x.
struct Ratios {
  std::vector<std::vector<double>> coef;
  std::vector<std::pair<double, double>> pair_coef;
};

Ratios ratio_coefficients(const MaxMinProblem& p) {
  const std::size_t jobs = p.workers.size();
  const std::size_t kinds = p.capacity.size();
  double all = 0.0;
  for (int c : p.capacity) all += c;
  Ratios r;
  r.coef.assign(jobs, std::vector<double>(kinds, 0.0));
  std::vector<double> equal_shares(jobs, 0.0);
  for (std::size_t j = 0; j < jobs; ++j) {
    double equal_share = 0.0;
    for (std::size_t k = 0; k < kinds; ++k) equal_share += p.capacity[k] / all * p.throughput[j][k];
    equal_shares[j] = equal_share;
    for (std::size_t k = 0; k < kinds; ++k) {
      if (p.workers[j] <= p.capacity[k]) r.coef[j][k] = p.workers[j] * p.throughput[j][k] / equal_share;
    }
  }
  for (const PackedCombination& c : p.pairs) {
    r.pair_coef.emplace_back(p.throughput[c.a][c.kind] * c.fraction_a / equal_shares[c.a],
                             p.throughput[c.b][c.kind] * c.fraction_b / equal_shares[c.b]);
  }
  return r;
}

// The LP's columns: x[j][k] at 1 + j * kinds + k, then t, then pair_x[p].
struct Columns {
  std::size_t jobs = 0;
  std::size_t kinds = 0;
  int x(std::size_t j, std::size_t k) const { return static_cast<int>(j * kinds + k) + 1; }
  int t() const { return static_cast<int>(jobs * kinds) + 1; }
  int pair(std::size_t i) const { return t() + 1 + static_cast<int>(i); }
};

// Rows: the ratio rows (ratio_j - t >= 0), the job rows (sum of the job's combinations <= 1), the capacity rows
// (sum_j w_j x + the kind's pairs <= capacity). Without pairs this is the LP of Gavel's max-min fairness alone,
// column for column.
// `copies[j]`: how many identical jobs job j stands for (its capacity entries count each).
void load_lp(glp_prob* lp, const MaxMinProblem& p, const Ratios& r, const Columns& col,
             const std::vector<int>& copies) {
  const std::size_t jobs = col.jobs;
  const std::size_t kinds = col.kinds;
  glp_set_obj_dir(lp, GLP_MAX);
  glp_add_cols(lp, col.t() + static_cast<int>(p.pairs.size()));
  glp_add_rows(lp, static_cast<int>(2 * jobs + kinds));
  std::vector<int> ia{0}, ja{0};
  std::vector<double> ar{0.0};
  auto entry = [&](int row, int c, double v) {
    if (v != 0.0) ia.push_back(row), ja.push_back(c), ar.push_back(v);
  };
  for (std::size_t j = 0; j < jobs; ++j) {
    const int ratio_row = static_cast<int>(j) + 1;
    const int job_row = static_cast<int>(jobs + j) + 1;
    glp_set_row_bnds(lp, ratio_row, GLP_LO, 0.0, 0.0);
    glp_set_row_bnds(lp, job_row, GLP_UP, 0.0, 1.0);
    entry(ratio_row, col.t(), -1.0);
    for (std::size_t k = 0; k < kinds; ++k) {
      const int c = col.x(j, k);
      if (r.coef[j][k] > 0.0) {
        glp_set_col_bnds(lp, c, GLP_DB, 0.0, 1.0);
      } else {
        glp_set_col_bnds(lp, c, GLP_FX, 0.0, 0.0);
      }
      entry(ratio_row, c, r.coef[j][k]);
      entry(job_row, c, 1.0);
      entry(static_cast<int>(2 * jobs + k) + 1, c, static_cast<double>(copies[j]) * p.workers[j]);
    }
  }
  for (std::size_t k = 0; k < kinds; ++k) {
    glp_set_row_bnds(lp, static_cast<int>(2 * jobs + k) + 1, GLP_UP, 0.0, p.capacity[k]);
  }
  glp_set_col_bnds(lp, col.t(), GLP_LO, 0.0, 0.0);
  for (std::size_t i = 0; i < p.pairs.size(); ++i) {
    const PackedCombination& c = p.pairs[i];
    const int pc = col.pair(i);
    glp_set_col_bnds(lp, pc, GLP_DB, 0.0, 1.0);
    entry(static_cast<int>(c.a) + 1, pc, r.pair_coef[i].first);
    entry(static_cast<int>(c.b) + 1, pc, r.pair_coef[i].second);
    entry(static_cast<int>(jobs + c.a) + 1, pc, 1.0);
    entry(static_cast<int>(jobs + c.b) + 1, pc, 1.0);
    entry(static_cast<int>(2 * jobs + c.kind) + 1, pc, 1.0);
  }
  glp_load_matrix(lp, static_cast<int>(ia.size()) - 1, ia.data(), ja.data(), ar.data());
}

// The solution the LP holds now, with its smallest ratio.
void read_solution(glp_prob* lp, const MaxMinProblem& p, const Ratios& r, const Columns& col, TimeFractions& out) {
  out.x.assign(col.jobs, std::vector<double>(col.kinds, 0.0));
  out.pair_x.assign(p.pairs.size(), 0.0);
  std::vector<double> ratio(col.jobs, 0.0);
  for (std::size_t j = 0; j < col.jobs; ++j) {
    for (std::size_t k = 0; k < col.kinds; ++k) {
      out.x[j][k] = std::clamp(glp_get_col_prim(lp, col.x(j, k)), 0.0, 1.0);
      ratio[j] += r.coef[j][k] * out.x[j][k];
    }
  }
  for (std::size_t i = 0; i < p.pairs.size(); ++i) {
    out.pair_x[i] = std::clamp(glp_get_col_prim(lp, col.pair(i)), 0.0, 1.0);
    ratio[p.pairs[i].a] += r.pair_coef[i].first * out.pair_x[i];
    ratio[p.pairs[i].b] += r.pair_coef[i].second * out.pair_x[i];
  }
  out.min_ratio = *std::min_element(ratio.begin(), ratio.end());
}

// The LP of `p` (checked), each job standing for copies[j] identical ones.
Result<TimeFractions> solve_checked(const MaxMinProblem& p, const std::vector<int>& copies) {
  const Columns col{p.workers.size(), p.capacity.size()};
  TimeFractions out;
  if (col.jobs == 0) return out;
  const Ratios r = ratio_coefficients(p);
  std::unique_ptr<glp_prob, ProblemDeleter> lp(glp_create_prob());
  load_lp(lp.get(), p, r, col, copies);
  // Phase 1: the max-min optimum t*.
  glp_set_obj_coef(lp.get(), col.t(), 1.0);
  OMNI_RETURN_IF_ERROR(run_simplex(lp.get(), "max-min phase"));
  read_solution(lp.get(), p, r, col, out);
  const double t_star = glp_get_col_prim(lp.get(), col.t());
  // Phase 2: among allocations keeping every ratio at t* (up to rounding), the largest sum of ratios. Should it
  // fail on rounding, phase 1's optimum stands.
  glp_set_obj_coef(lp.get(), col.t(), 0.0);
  for (std::size_t j = 0; j < col.jobs; ++j) {
    for (std::size_t k = 0; k < col.kinds; ++k) glp_set_obj_coef(lp.get(), col.x(j, k), copies[j] * r.coef[j][k]);
  }
  for (std::size_t i = 0; i < p.pairs.size(); ++i) {
    glp_set_obj_coef(lp.get(), col.pair(i), r.pair_coef[i].first + r.pair_coef[i].second);
  }
  glp_set_col_bnds(lp.get(), col.t(), GLP_LO, t_star - 1e-12 * std::max(1.0, t_star), 0.0);
  if (run_simplex(lp.get(), "total-ratio phase").is_ok()) read_solution(lp.get(), p, r, col, out);
  return out;
}

}  // namespace

Result<TimeFractions> solve_max_min_fairness(const MaxMinProblem& p) {
  OMNI_RETURN_IF_ERROR(check_problem(p));
  if (!p.pairs.empty()) return solve_checked(p, std::vector<int>(p.workers.size(), 1));
  // Jobs of equal workers and throughputs are interchangeable: some optimum gives them equal fractions (averaging
  // an optimum over their permutations keeps it feasible and optimal in both phases). So the LP is solved over one
  // job per class, counted as many times as the class has jobs: its size no longer grows with the jobs present.
  std::map<std::pair<int, std::vector<double>>, std::size_t> class_of;
  std::vector<std::size_t> job_class(p.workers.size());
  MaxMinProblem classes{p.capacity, {}, {}, {}};
  std::vector<int> copies;
  for (std::size_t j = 0; j < p.workers.size(); ++j) {
    const auto [it, added] = class_of.try_emplace({p.workers[j], p.throughput[j]}, classes.workers.size());
    if (added) {
      classes.workers.push_back(p.workers[j]);
      classes.throughput.push_back(p.throughput[j]);
      copies.push_back(0);
    }
    job_class[j] = it->second;
    ++copies[it->second];
  }
  auto solved = solve_checked(classes, copies);
  if (!solved.is_ok()) return solved.status();
  TimeFractions out;
  out.min_ratio = solved->min_ratio;
  out.x.reserve(p.workers.size());
  for (std::size_t j = 0; j < p.workers.size(); ++j) out.x.push_back(solved->x[job_class[j]]);
  return out;
}

}  // namespace omnilearn::scheduler
